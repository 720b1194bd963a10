// Command p4 is a stand-in for the Perforce command-line client, for tests.
// It answers the commands Criticizer issues (describe, print, diff2, filelog,
// user, protects [-m | -M], login [-a], trust -i, info) as the real client
// does with -ztag -Mj (docs/reference/p4-cli.md): one JSON object per line,
// keys sorted; server messages are {"data","generic","severity"}, a warning
// (2) leaves exit 0, an error (3, 4) makes it 1; only client-side failures
// are plain text on stderr. The "server" is the fixture depot directory
// P4PORT (or -p) names, an absolute path (else: unreachable); depot/README.md
// documents the fixtures, faults, authentication, protections and latency.
package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/udiff"
)

func main() {
	os.Exit(run(os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr))
}

// session is one invocation: its global options and output streams.
type session struct {
	port, user, client string
	passwd, tickets    string
	trust, home        string
	tagged, json       bool
	stdin              io.Reader
	stdout, stderr     io.Writer
	d                  *depot
	exit               int // 1 once a message of severity >= 3 was sent
}

// globalValueFlags are the real client's global options that take a value.
const globalValueFlags = "bcCdHLMpPQruvxz"

// Severities and generic codes of the messages the stand-in sends.
const (
	sevWarn  = 2
	sevError = 3

	evUsage   = 1
	evUnknown = 2
	evIllegal = 4
	evEmpty   = 17
	evContext = 36 // login required
	evComm    = 38 // communications (EV_COMM)
)

func run(args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	s := &session{port: getenv("P4PORT"), user: getenv("P4USER"), client: getenv("P4CLIENT"), passwd: getenv("P4PASSWD"),
		tickets: getenv("P4TICKETS"), trust: getenv("P4TRUST"), home: getenv("HOME"), stdin: stdin, stdout: stdout, stderr: stderr}
	i := 0
	for ; i < len(args) && strings.HasPrefix(args[i], "-") && len(args[i]) > 1; i++ {
		flag, val := args[i][1], args[i][2:]
		if strings.IndexByte(globalValueFlags, flag) >= 0 && val == "" {
			if i+1 >= len(args) {
				return s.clientError("Missing argument for -" + string(flag) + " flag.")
			}
			i++
			val = args[i]
		}
		if p, ok := map[byte]*string{'p': &s.port, 'u': &s.user, 'c': &s.client, 'P': &s.passwd}[flag]; ok {
			*p = val
			continue
		}
		switch flag {
		case 'z':
			if val != "tag" && !strings.HasPrefix(val, "prog=") && !strings.HasPrefix(val, "version=") {
				return s.clientError("Invalid -z option: " + val + ".")
			}
			s.tagged = s.tagged || val == "tag"
		case 'M':
			if val != "j" {
				return s.clientError("standin: only -Mj output is supported (got -M" + val + ").")
			}
			s.json = true
		case 'x':
			return s.clientError("standin: -x (arguments from a file) is not supported.")
		case 'G':
			return s.clientError("standin: -G output is not supported; use -Mj.")
		case 'V':
			fmt.Fprintln(stdout, "Perforce - The Fast Software Configuration Management System.\nRev. P4/STANDIN/2024.2/0000000 (criticizer stand-in).")
			return 0
		case 'H', 'C', 'd', 'L', 'Q', 'r', 'v', 'b', 'q', 's', 'I': // change nothing the fixtures model
		default:
			return s.clientError("Invalid option: " + args[i] + ".")
		}
	}
	if i == len(args) {
		return s.clientError("")
	}
	cmd, cmdArgs := args[i], args[i+1:]

	if !s.tagged {
		return s.clientError("standin: tagged output (-ztag) is required.")
	}
	if code := s.connect(); code != 0 {
		return code
	}
	if cmd == "trust" {
		return s.trustCmd(cmdArgs)
	}
	if code := s.checkTrust(); code != 0 {
		return code
	}
	time.Sleep(time.Duration(s.d.server.LatencyMS) * time.Millisecond) // one simulated round trip
	if cmd == "info" || cmd == "login" || s.authenticated() {
		if f, ok := commands[cmd]; ok {
			f(s, cmdArgs)
		} else {
			s.msg(sevError, evUsage, "Unknown command.  Try 'p4 help' for info.")
		}
	}
	return s.exit
}

// commands are the server commands; all but info and login need credentials.
var commands = map[string]func(*session, []string){
	"info": (*session).info, "login": (*session).login, "describe": (*session).describe, "diff2": (*session).diff2,
	"print": (*session).print, "filelog": (*session).filelog, "user": (*session).userSpec, "protects": (*session).protects,
}

// connect opens the fixture depot, failing as the real client does when no
// server answers at P4PORT.
func (s *session) connect() int {
	port := cmp.Or(s.port, "perforce:1666")
	st, err := os.Stat(port)
	if !filepath.IsAbs(port) || err != nil || !st.IsDir() {
		return s.clientFailure(fmt.Sprintf("Perforce client error:\n\tConnect to server failed; check $P4PORT.\n\tTCP connect to %s failed.\n\tconnect: %s: Connection refused", port, port))
	}
	d, err := loadDepot(port)
	if err != nil {
		s.serverError("broken fixture depot", err)
		return s.exit
	}
	s.d = d
	return 0
}

// flags splits a command's arguments into options (values attached: -m5)
// and operands.
func flags(args []string) (opts []string, operands []string) {
	i := 0
	for ; i < len(args) && strings.HasPrefix(args[i], "-") && len(args[i]) > 1; i++ {
		if args[i] == "--" {
			i++
			break
		}
		opts = append(opts, args[i])
	}
	return opts, args[i:]
}

func (s *session) usage(usage, detail string) {
	s.msg(sevError, evUsage, "%s\n%s", usage, detail)
}

// parseArgs is flags, answering the usage error for an option valid refuses
// or for other than n operands (n 0: at least one).
func (s *session) parseArgs(args []string, usage string, n int, valid func(string) bool) ([]string, []string, bool) {
	opts, operands := flags(args)
	for _, o := range opts {
		if !valid(o) {
			s.usage(usage, "Invalid option: "+o+".")
			return nil, nil, false
		}
	}
	if len(operands) == 0 || (n > 0 && len(operands) != n) {
		s.usage(usage, "Missing/wrong number of arguments.")
		return nil, nil, false
	}
	return opts, operands, true
}

// serverError is a fixture the stand-in cannot serve: a severity 4 message.
func (s *session) serverError(what string, err error) {
	s.msg(4, 0, "Perforce server error:\n\tstandin: %s: %v", what, err)
}

func (s *session) describe(args []string) {
	opts, operands, ok := s.parseArgs(args, "Usage: describe [ -d<flags> -m -s -S -f -O -I ] changelist# ...", 0, func(o string) bool {
		return slices.Contains([]string{"-s", "-f", "-O", "-I", "-S"}, o) || strings.HasPrefix(o, "-m")
	})
	if !ok {
		return
	}
	shelved := slices.Contains(opts, "-S")
	for _, arg := range operands {
		cl, err := strconv.ParseInt(arg, 10, 64)
		if err != nil || cl <= 0 {
			s.msg(sevError, evUsage, "Invalid changelist number '%s'.", arg)
			return
		}
		c, err := s.d.change(cl)
		if err != nil {
			s.serverError("broken fixture", err)
			return
		}
		if c == nil || c.EdgeShelf {
			s.msg(sevError, evUnknown, "Change %d unknown.", cl)
			continue
		}
		if done := s.serveFaults(fmt.Sprintf("change-%d", cl), "describe", c.Faults, c.SleepMS); done {
			return
		}
		rec := map[string]any{"change": strconv.FormatInt(c.Change, 10), "user": c.User, "client": c.Client,
			"time": strconv.FormatInt(c.Time, 10), "desc": c.Desc, "status": c.Status, "changeType": "public"}
		if shelved && c.Shelved {
			rec["shelved"] = ""
		}
		if (!shelved || c.Shelved) && len(c.Files) > 0 {
			rec["path"] = commonDir(c.Files) + "..."
			n := 0
			for _, f := range c.Files {
				if s.d.protected(f.Path) {
					continue // the server omits files the user cannot see
				}
				idx := strconv.Itoa(n)
				n++
				rev := f.Rev
				if c.Shelved && rev == 0 {
					rev = 1 // an opened add shows as #1
				}
				rec["depotFile"+idx], rec["action"+idx], rec["type"+idx], rec["rev"+idx] = f.Path, f.Action, f.Type, strconv.Itoa(rev)
				if !isDelete(f.Action) {
					if size, ok := s.d.size(&f); ok {
						rec["fileSize"+idx] = strconv.FormatInt(size, 10)
					}
					// Each revision's MD5, upper-case hex (a shelved file's: the shelved content's).
					if f.hasAfter() {
						if sum, err := s.d.digest(&f); err == nil {
							rec["digest"+idx] = sum
						}
					}
				}
			}
		}
		s.emit(rec)
	}
}

// resolved is a file command's operand, looked up before any output so an
// injected fault replaces the whole answer.
type resolved struct {
	spec string
	rev  *revision
	deny bool
}

// resolveAll resolves specs; nil when an error or an injected fault answered.
func (s *session) resolveAll(command string, specs []string) []resolved {
	out := make([]resolved, len(specs))
	seen := map[*change]bool{}
	for i, spec := range specs {
		out[i].spec = spec
		// print and diff2 need read access; filelog (metadata) list access.
		if s.d.protected(specPath(spec)) || (command != "filelog" && s.d.unreadable(specPath(spec))) {
			out[i].deny = true
			continue
		}
		r, err := s.d.lookup(spec)
		if err != nil {
			s.msg(sevError, evUsage, "Invalid revision number '%s'.", spec)
			return nil
		}
		out[i].rev = r
		if r != nil && !seen[r.change] {
			seen[r.change] = true
			if s.serveFaults(fmt.Sprintf("change-%d", r.change.Change), command, r.change.Faults, r.change.SleepMS) {
				return nil
			}
		}
	}
	return out
}

// eachFile hands fn the revision of each spec print and filelog answer, in
// order, a missing or hidden file's warning sent in its place; false stops.
func (s *session) eachFile(command string, specs []string, fn func(*revision) bool) {
	for _, f := range s.resolveAll(command, specs) {
		if !s.fileWarning(f) && !fn(f.rev) {
			return
		}
	}
}

// fileWarning sends the per-file warnings of print, diff2 and filelog.
func (s *session) fileWarning(r resolved) bool {
	switch {
	case r.deny:
		// Generic 17 (EV_EMPTY), not a permission code: the client source's
		// message catalog, msgs/msgdm.cc (reference, Changelists).
		s.msg(sevWarn, evEmpty, "%s - protected namespace - access denied.", r.spec)
	case r.rev == nil:
		s.msg(sevWarn, evEmpty, "%s - no such file(s).", r.spec)
	default:
		return false
	}
	return true
}

func (s *session) print(args []string) {
	opts, operands, ok := s.parseArgs(args, "Usage: print [-a -A -k -o localFile -q -m max -U] files...", 0, func(o string) bool {
		return o == "-q" || o == "-k" || o == "-a"
	})
	if !ok {
		return
	}
	quiet, expand := slices.Contains(opts, "-q"), !slices.Contains(opts, "-k")
	s.eachFile("print", operands, func(r *revision) bool {
		content, err := r.read(s.d)
		if err != nil {
			s.serverError("broken fixture", err)
			return false
		}
		if expand {
			change, at := r.change.Change, time.Unix(r.change.Time, 0)
			if r.before {
				// The fixtures do not say which change made a "before"
				// revision; an earlier one, a day earlier, stands for it.
				change, at = change-1, at.Add(-24*time.Hour)
			}
			content = expandKeywords(content, r.file.Type, r.file.Path, r.rev, change, r.change.User, at)
		}
		if !quiet {
			s.emit(map[string]any{"depotFile": r.file.Path, "rev": strconv.Itoa(r.rev), "change": strconv.FormatInt(r.change.Change, 10),
				"action": r.file.Action, "type": r.file.Type, "time": strconv.FormatInt(r.change.Time, 10), "fileSize": strconv.Itoa(len(content))})
		}
		for _, chunk := range chunks(content, 4096) {
			s.emit(map[string]any{"data": chunk})
		}
		s.emit(map[string]any{"data": ""}) // the real client ends each file so
		return true
	})
}

func (s *session) diff2(args []string) {
	ctx := -1
	_, operands, ok := s.parseArgs(args, "Usage: diff2 [ -d<flags> -Od -q -t -u ] [ -b branch ] [ -S stream ] [ -P parent ] file file2", 2, func(o string) bool {
		v, du := strings.CutPrefix(o, "-du")
		if !du {
			return o == "-q" || o == "-t"
		}
		n, err := strconv.Atoi(cmp.Or(v, "3"))
		ctx = n
		return err == nil && n >= 0
	})
	if !ok {
		return
	}
	if ctx < 0 {
		s.msg(sevError, evUsage, "standin: diff2 supports only unified output (-du[n]).")
		return
	}
	files := s.resolveAll("diff2", operands)
	if files == nil {
		return
	}
	missing := false
	for _, f := range files {
		missing = s.fileWarning(f) || missing
	}
	if missing {
		return
	}
	left, right := files[0].rev, files[1].rev
	lc, err1 := left.read(s.d)
	rc, err2 := right.read(s.d)
	if err1 != nil || err2 != nil {
		s.msg(4, 0, "Perforce server error:\n\tstandin: broken fixture")
		return
	}
	body := udiff.Unified(lc, rc, ctx)
	if right.file.Diff != nil && left.file == right.file {
		body = *right.file.Diff
	}
	status := "content"
	if body == "" {
		status = "identical"
	}
	s.emit(map[string]any{"status": status, "depotFile": left.file.Path, "rev": strconv.Itoa(left.rev), "type": left.file.Type,
		"depotFile2": right.file.Path, "rev2": strconv.Itoa(right.rev), "type2": right.file.Type})
	for _, chunk := range chunks(body, 4096) {
		s.emit(map[string]any{"data": chunk})
	}
}

// filelog [-m1] answers each revision's record with its "how" records.
func (s *session) filelog(args []string) {
	_, operands, ok := s.parseArgs(args, "Usage: filelog [ -c changelist# -h -i -l -L -t -m maxRevs -p -s ] files...", 0, func(o string) bool {
		return slices.Contains([]string{"-m1", "-s", "-l", "-L", "-t"}, o)
	})
	if !ok {
		return
	}
	s.eachFile("filelog", operands, func(r *revision) bool {
		rec := map[string]any{"depotFile": r.file.Path, "rev0": strconv.Itoa(r.rev), "change0": strconv.FormatInt(r.change.Change, 10),
			"action0": r.file.Action, "type0": r.file.Type, "user0": r.change.User, "client0": r.change.Client,
			"time0": strconv.FormatInt(r.change.Time, 10), "desc0": r.change.Desc}
		for n, in := range integrations(r.file) {
			// how<rev>,<n>: every integration record of revision 0, in the
			// server's order (perforce/p4transfer test/TestP4Transfer.py).
			k := "0," + strconv.Itoa(n)
			rec["how"+k], rec["file"+k], rec["srev"+k], rec["erev"+k] = in.How, in.File, in.SRev, in.ERev
		}
		s.emit(rec)
		return true
	})
}

// integrations are the fixture's "how" records, or a move/add's "moved from".
func integrations(f *file) []integration {
	if len(f.Integrations) > 0 || f.MovedFrom == "" {
		return f.Integrations
	}
	srev := "#" + strconv.Itoa(f.MovedFromRev-1)
	if f.MovedFromRev <= 1 {
		srev = "#none"
	}
	return []integration{{How: "moved from", File: f.MovedFrom, SRev: srev, ERev: "#" + strconv.Itoa(f.MovedFromRev)}}
}

func (s *session) userSpec(args []string) {
	const usage = "Usage: user [ -f -F -i -o ] [ username ]"
	opts, operands := flags(args)
	if len(opts) != 1 || opts[0] != "-o" {
		s.usage(usage, "standin: only 'user -o' is supported.")
		return
	}
	name := s.user
	if len(operands) == 1 {
		name = operands[0]
	} else if len(operands) > 1 {
		s.usage(usage, "Missing/wrong number of arguments.")
		return
	}
	if name == "" || strings.ContainsAny(name, "/\\ \t\n@#*%") || strings.HasPrefix(name, ".") {
		s.msg(sevError, evUsage, "Error in user specification.\nInvalid user name '%s'.", name)
		return
	}
	u, err := s.d.user(name)
	if err != nil {
		s.serverError("broken user fixture", err)
		return
	}
	if u == nil {
		// An unknown user's default spec: no dates, a made-up Email.
		s.emit(map[string]any{"User": name, "Email": name + "@" + s.client, "FullName": name, "Type": "standard", "AuthMethod": "perforce"})
		return
	}
	if s.serveFaults("user-"+name, "user", u.Faults, u.SleepMS) {
		return
	}
	s.emit(map[string]any{"User": u.User, "Email": u.Email, "Update": "2024/01/15 09:30:00", "Access": "2024/06/01 12:00:00",
		"FullName": u.FullName, "Type": "standard", "AuthMethod": "perforce"})
}

// protects answers the caller's own protections (docs/reference/p4-cli.md,
// Protections): "-m [path]" {"permMax"}, the highest level anywhere, path
// and exclusions ignored (the .NET API's GetMaxProtectionAccessCmdFlags:
// "-m … does not take exclusions or the specified file path into
// account"); "-M path" the same with both taken into account
// (depot.maxAccess); none, the table's lines (protectsTable). Other users'
// lines (-a, -g, -u) need super access and are not modelled.
func (s *session) protects(args []string) {
	const usage = "Usage: protects [ -s spec ] [ -a | -g group | -u user ] [ -h host ] [ -m | -M ] [ file ... ]"
	opts, operands := flags(args)
	if len(opts) > 1 || (len(opts) == 1 && opts[0] != "-m" && opts[0] != "-M") {
		s.usage(usage, "standin: only 'protects [-m | -M] [file]' is supported.")
		return
	}
	if len(operands) > 1 {
		s.usage(usage, "standin: one file argument at most.")
		return
	}
	path := ""
	if len(operands) == 1 {
		path = operands[0]
		if !strings.HasPrefix(path, "//") {
			s.msg(sevError, evUsage, "%s - must refer to client '%s'.", path, s.client)
			return
		}
	}
	switch {
	case len(opts) == 0:
		s.protectsTable()
	case opts[0] == "-m":
		s.emit(map[string]any{"permMax": s.d.access()})
	case path == "":
		s.msg(sevError, evUsage, "standin: 'protects -M' needs a file argument.")
	default:
		s.emit(map[string]any{"permMax": s.d.maxAccess(path)})
	}
}

// protectsTable prints the caller's lines as real servers do: {perm, host,
// user, line, depotFile}, empty "isgroup" on a group's line, empty "unmap"
// on an exclusionary one, depotFile without "-"; hide_exclusions leaves
// those out (github.com/brettbates/p4access prots/prots_test.go, captured
// from a real server; reference, "Tagged output of p4 protects";
// testdata/realshapes/protects.json).
func (s *session) protectsTable() {
	lines := s.d.table()
	if len(s.d.server.Protections) > 0 {
		var err error
		if lines, err = s.d.explicitTable(s.user); err != nil {
			s.msg(4, 0, "Perforce server error:\n\tstandin: %v", err)
			return
		}
	}
	for _, l := range lines {
		if l.exclude && s.d.server.HideExclusions {
			continue
		}
		rec := map[string]any{"perm": l.perm, "host": cmp.Or(l.host, "*"), "user": cmp.Or(l.name, s.user), "line": strconv.Itoa(l.number), "depotFile": l.path}
		if l.group {
			rec["isgroup"] = ""
		}
		if l.exclude {
			rec["unmap"] = ""
		}
		s.emit(rec)
	}
}

func (s *session) info([]string) {
	s.emit(map[string]any{"userName": s.user, "clientName": s.client, "serverAddress": s.port,
		"serverVersion": "P4D/STANDIN/2024.2/0000000", "serverLicense": "none", "caseHandling": "sensitive"})
}

// serveFaults sleeps the fixture's delay and serves the first pending fault
// for command, reporting whether it replaced the normal output.
func (s *session) serveFaults(owner, command string, faults []fault, sleepMS int) (done bool) {
	time.Sleep(time.Duration(sleepMS) * time.Millisecond) // 0: none
	f, err := s.d.takeFault(owner, command, faults)
	if err != nil {
		s.serverError("fault state", err)
		return true
	}
	if f == nil {
		return false
	}
	time.Sleep(time.Duration(f.SleepMS) * time.Millisecond)
	if f.Stdout != "" {
		io.WriteString(s.stdout, f.Stdout)
	}
	if f.Message != "" {
		s.msg(f.Severity, f.Generic, "%s", f.Message)
	}
	if f.Stderr != "" {
		fmt.Fprintln(s.stderr, strings.TrimSuffix(f.Stderr, "\n"))
	}
	if f.Exit == 0 && f.Stderr == "" && f.Stdout == "" && f.Message == "" {
		return false // a pure delay: carry on normally
	}
	if f.Exit != 0 {
		s.exit = f.Exit
	}
	return true
}

// clientError is a usage error of the client itself: text on stderr, exit 1.
func (s *session) clientError(detail string) int {
	msg := "Usage: p4 [ options ] command [ arg ... ]\n    Try 'p4 help' for info."
	if detail != "" {
		msg += "\n" + detail
	}
	return s.clientFailure(msg)
}

func (s *session) clientFailure(text string) int {
	fmt.Fprintln(s.stderr, text)
	return 1
}

// msg sends a server message, {"data","generic","severity"}; severity 3 and
// above make the exit status 1.
func (s *session) msg(severity, generic int, format string, args ...any) {
	text := fmt.Sprintf(format, args...) + "\n"
	if severity >= sevError {
		s.exit = 1
	}
	if !s.json {
		fmt.Fprint(s.stderr, text) // tagged text mode prints messages on stderr
		return
	}
	s.emit(map[string]any{"data": text, "generic": generic, "severity": severity})
}

// emit writes one record; encoding/json sorts keys and replaces invalid
// UTF-8 with U+FFFD, as -Mj does.
func (s *session) emit(r map[string]any) {
	if !s.json {
		for _, k := range slices.Sorted(maps.Keys(r)) {
			if k == "data" {
				fmt.Fprint(s.stdout, r[k])
				continue
			}
			fmt.Fprintf(s.stdout, "... %s %v\n", k, r[k])
		}
		fmt.Fprintln(s.stdout)
		return
	}
	enc := json.NewEncoder(s.stdout)
	enc.SetEscapeHTML(false) // the real client writes "<" and "&" as they are
	_ = enc.Encode(r)
}

// chunks splits s into data records of at most n bytes, on rune boundaries.
func chunks(s string, n int) []string {
	var out []string
	for s != "" {
		c := domain.Clip(s, n)
		if c == "" { // no character boundary in the first n bytes
			c = s[:n]
		}
		out = append(out, c)
		s = s[len(c):]
	}
	return out
}

// commonDir is the longest directory prefix (ending in "/") of the files.
func commonDir(files []file) string {
	var paths []string
	for _, f := range files {
		paths = append(paths, f.Path)
	}
	slices.Sort(paths)
	first, last := paths[0], paths[len(paths)-1]
	n := 0
	for n < len(first) && n < len(last) && first[n] == last[n] {
		n++
	}
	prefix := first[:n]
	if i := strings.LastIndexByte(prefix, '/'); i >= 0 {
		return prefix[:i+1]
	}
	return "//"
}

// specPath is the depot path of a file spec, without its revision.
func specPath(spec string) string {
	if i := strings.IndexAny(spec, "#@"); i >= 0 {
		return spec[:i]
	}
	return spec
}
