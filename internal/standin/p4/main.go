// Command p4 is a stand-in for the Perforce command-line client, for tests.
// It answers the commands Criticizer issues (describe, diff2, print, user,
// info) the way the real client does with -ztag -Mj: one JSON object per line
// on stdout, text content in records with a "data" field after the tagged
// header record, and errors as plain text on stderr with the real client's
// wording and exit codes.
//
// The "server" is a fixture depot directory named by P4PORT (or -p), which
// must be an absolute path; anything else fails like an unreachable server.
// The fixture format, including fault injection, is documented in
// depot/README.md beside this file.
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

func main() {
	os.Exit(run(os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
}

// session is one invocation: its global options and output streams.
type session struct {
	port, user, client string
	tagged, json       bool
	stdout, stderr     io.Writer
	d                  *depot
}

// globalValueFlags are the real client's global options that take a value.
const globalValueFlags = "bcCdHLMpPQruvxz"

func run(args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	s := &session{
		port:   getenv("P4PORT"),
		user:   getenv("P4USER"),
		client: getenv("P4CLIENT"),
		stdout: stdout,
		stderr: stderr,
	}
	i := 0
	for ; i < len(args) && strings.HasPrefix(args[i], "-") && len(args[i]) > 1; i++ {
		flag, val := args[i][1], args[i][2:]
		if strings.IndexByte(globalValueFlags, flag) >= 0 && val == "" {
			if i+1 >= len(args) {
				return s.usageError("Missing argument for -" + string(flag) + " flag.")
			}
			i++
			val = args[i]
		}
		switch flag {
		case 'p':
			s.port = val
		case 'u':
			s.user = val
		case 'c':
			s.client = val
		case 'z':
			if val != "tag" && !strings.HasPrefix(val, "prog=") && !strings.HasPrefix(val, "version=") {
				return s.usageError("Invalid -z option: " + val + ".")
			}
			s.tagged = s.tagged || val == "tag"
		case 'M':
			if val != "j" {
				return s.fail(1, "standin: only -Mj output is supported (got -M%s).", val)
			}
			s.json = true
		case 'x':
			return s.fail(1, "standin: -x (arguments from a file) is not supported.")
		case 'G':
			return s.fail(1, "standin: -G output is not supported; use -Mj.")
		case 'V':
			fmt.Fprintln(stdout, "Perforce - The Fast Software Configuration Management System.\nRev. P4/STANDIN/2024.2/0000000 (criticizer stand-in).")
			return 0
		case 'P', 'H', 'C', 'd', 'L', 'Q', 'r', 'v', 'b', 'q', 's', 'I':
			// Accepted and ignored: they change nothing the fixtures model.
		default:
			return s.usageError("Invalid option: " + args[i] + ".")
		}
	}
	if i == len(args) {
		return s.usageError("")
	}
	cmd, cmdArgs := args[i], args[i+1:]

	if !s.tagged {
		return s.fail(1, "standin: tagged output (-ztag) is required.")
	}
	if code := s.connect(); code != 0 {
		return code
	}
	switch cmd {
	case "describe":
		return s.describe(cmdArgs)
	case "diff2":
		return s.diff2(cmdArgs)
	case "print":
		return s.print(cmdArgs)
	case "user":
		return s.userSpec(cmdArgs)
	case "info":
		return s.info()
	}
	return s.fail(1, "Unknown command.  Try 'p4 help' for info.")
}

// connect opens the fixture depot, failing the way the real client fails
// when no server answers at P4PORT.
func (s *session) connect() int {
	port := s.port
	if port == "" {
		port = "perforce:1666"
	}
	st, err := os.Stat(port)
	if !filepath.IsAbs(port) || err != nil || !st.IsDir() {
		return s.fail(1, "Perforce client error:\n\tConnect to server failed; check $P4PORT.\n\tTCP connect to %s failed.\n\tconnect: %s: Connection refused", port, port)
	}
	d, err := loadDepot(port)
	if err != nil {
		return s.fail(1, "Perforce server error:\n\tstandin: broken fixture depot: %v", err)
	}
	s.d = d
	return 0
}

// flags splits a command's arguments into its options (as given) and its
// operands. Options with a value are attached (-m5) or not supported.
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

func (s *session) describe(args []string) int {
	const usage = "Usage: describe [ -d<flags> -m -s -S -f -O -I ] changelist# ..."
	opts, operands := flags(args)
	shelved := false
	for _, o := range opts {
		switch {
		case o == "-s", o == "-f", o == "-O", o == "-I", strings.HasPrefix(o, "-d"), strings.HasPrefix(o, "-m"):
		case o == "-S":
			shelved = true
		default:
			return s.fail(1, "%s\nInvalid option: %s.", usage, o)
		}
	}
	if len(operands) == 0 {
		return s.fail(1, "%s\nMissing/wrong number of arguments.", usage)
	}
	exit := 0
	for _, arg := range operands {
		cl, err := strconv.ParseInt(arg, 10, 64)
		if err != nil || cl <= 0 {
			return s.fail(1, "Invalid changelist number '%s'.", arg)
		}
		c := s.d.changes[cl]
		if c == nil {
			s.errorf("Change %d unknown.", cl)
			exit = 1
			continue
		}
		if code, done := s.serveFaults(fmt.Sprintf("change-%d", cl), "describe", c.Faults, c.SleepMS); done {
			return code
		}
		rec := record{
			{"change", strconv.FormatInt(c.Change, 10)},
			{"user", c.User},
			{"client", c.Client},
			{"time", strconv.FormatInt(c.Time, 10)},
			{"desc", c.Desc},
			{"status", c.Status},
			{"changeType", "public"},
		}
		showFiles := !shelved || c.Shelved
		if shelved && c.Shelved {
			rec = append(rec, kv{"shelved", ""})
		}
		if showFiles && len(c.Files) > 0 {
			rec = append(rec, kv{"path", commonDir(c.Files) + "..."})
			for n, f := range c.Files {
				idx := strconv.Itoa(n)
				rev := f.Rev
				if c.Shelved && rev == 0 {
					rev = 1 // an opened add shows as #1
				}
				rec = append(rec,
					kv{"depotFile" + idx, f.Path},
					kv{"action" + idx, f.Action},
					kv{"type" + idx, f.Type},
					kv{"rev" + idx, strconv.Itoa(rev)})
				if !isDelete(f.Action) {
					rec = append(rec, kv{"fileSize" + idx, strconv.Itoa(len(f.after))})
				}
			}
		}
		s.emit(rec)
	}
	return exit
}

func (s *session) print(args []string) int {
	const usage = "Usage: print [-a -A -k -o localFile -q -m max -U] files..."
	opts, operands := flags(args)
	quiet := false
	for _, o := range opts {
		switch o {
		case "-q":
			quiet = true
		case "-k", "-a":
		default:
			return s.fail(1, "%s\nInvalid option: %s.", usage, o)
		}
	}
	if len(operands) == 0 {
		return s.fail(1, "%s\nMissing/wrong number of arguments.", usage)
	}
	for _, spec := range operands {
		r, err := s.d.lookup(spec)
		if err != nil {
			return s.fail(1, "Invalid revision number '%s'.", spec)
		}
		if r == nil {
			// A warning, as with the real client: the command itself ran, so
			// the exit status stays 0 and only stderr tells.
			s.errorf("%s - no such file(s).", spec)
			continue
		}
		if code, done := s.serveFaults(fmt.Sprintf("change-%d", r.change.Change), "print", r.change.Faults, r.change.SleepMS); done {
			return code
		}
		if !quiet {
			s.emit(record{
				{"depotFile", r.file.Path},
				{"rev", strconv.Itoa(r.rev)},
				{"change", strconv.FormatInt(r.change.Change, 10)},
				{"action", r.file.Action},
				{"type", r.file.Type},
				{"time", strconv.FormatInt(r.change.Time, 10)},
				{"fileSize", strconv.Itoa(len(r.content))},
			})
		}
		for _, chunk := range chunks(r.content, 4096) {
			s.emit(record{{"data", chunk}})
		}
	}
	return 0
}

func (s *session) diff2(args []string) int {
	const usage = "Usage: diff2 [ -d<flags> -Od -q -t -u ] [ -b branch ] [ -S stream ] [ -P parent ] file file2"
	opts, operands := flags(args)
	ctx := -1
	for _, o := range opts {
		switch {
		case strings.HasPrefix(o, "-du"):
			n := 3
			if v := o[3:]; v != "" {
				var err error
				if n, err = strconv.Atoi(v); err != nil || n < 0 {
					return s.fail(1, "%s\nInvalid option: %s.", usage, o)
				}
			}
			ctx = n
		case o == "-q", o == "-t":
		default:
			return s.fail(1, "%s\nInvalid option: %s.", usage, o)
		}
	}
	if len(operands) != 2 {
		return s.fail(1, "%s\nMissing/wrong number of arguments.", usage)
	}
	if ctx < 0 {
		return s.fail(1, "standin: diff2 supports only unified output (-du[n]).")
	}
	left, errL := s.d.lookup(operands[0])
	right, errR := s.d.lookup(operands[1])
	if errL != nil || errR != nil {
		return s.fail(1, "Invalid revision number.")
	}
	missing := false
	for i, r := range []*revision{left, right} {
		if r == nil {
			s.errorf("%s - no such file(s).", operands[i])
			missing = true
		}
	}
	if missing {
		return 0
	}
	if code, done := s.serveFaults(fmt.Sprintf("change-%d", right.change.Change), "diff2", right.change.Faults, right.change.SleepMS); done {
		return code
	}
	body := unifiedDiff(left.content, right.content, ctx)
	if right.file.Diff != nil && left.file == right.file {
		body = *right.file.Diff
	}
	status := "content"
	if body == "" {
		status = "identical"
	}
	s.emit(record{
		{"status", status},
		{"depotFile", left.file.Path},
		{"rev", strconv.Itoa(left.rev)},
		{"type", left.file.Type},
		{"depotFile2", right.file.Path},
		{"rev2", strconv.Itoa(right.rev)},
		{"type2", right.file.Type},
	})
	for _, chunk := range chunks(body, 4096) {
		s.emit(record{{"data", chunk}})
	}
	return 0
}

func (s *session) userSpec(args []string) int {
	const usage = "Usage: user [ -f -F -i -o ] [ username ]"
	opts, operands := flags(args)
	if len(opts) != 1 || opts[0] != "-o" {
		return s.fail(1, "%s\nstandin: only 'user -o' is supported.", usage)
	}
	name := s.user
	if len(operands) == 1 {
		name = operands[0]
	} else if len(operands) > 1 {
		return s.fail(1, "%s\nMissing/wrong number of arguments.", usage)
	}
	if name == "" || strings.ContainsAny(name, "/\\ \t\n@#*%") || strings.HasPrefix(name, ".") {
		return s.fail(1, "Error in user specification.\nInvalid user name '%s'.", name)
	}
	u, err := s.d.user(name)
	if err != nil {
		return s.fail(1, "Perforce server error:\n\tstandin: broken user fixture: %v", err)
	}
	if u == nil {
		// The real server answers with a default spec for an unknown user:
		// no Update or Access dates, and an Email made up from the names.
		s.emit(record{
			{"User", name},
			{"Email", name + "@" + s.client},
			{"FullName", name},
			{"Type", "standard"},
			{"AuthMethod", "perforce"},
		})
		return 0
	}
	if code, done := s.serveFaults("user-"+name, "user", u.Faults, u.SleepMS); done {
		return code
	}
	s.emit(record{
		{"User", u.User},
		{"Email", u.Email},
		{"Update", "2024/01/15 09:30:00"},
		{"Access", "2024/06/01 12:00:00"},
		{"FullName", u.FullName},
		{"Type", "standard"},
		{"AuthMethod", "perforce"},
	})
	return 0
}

func (s *session) info() int {
	s.emit(record{
		{"userName", s.user},
		{"clientName", s.client},
		{"serverAddress", s.port},
		{"serverVersion", "P4D/STANDIN/2024.2/0000000"},
		{"serverLicense", "none"},
		{"caseHandling", "sensitive"},
	})
	return 0
}

// serveFaults applies the fixture's delay and the first pending fault for
// command. done reports that the fault replaced the command's normal output.
func (s *session) serveFaults(owner, command string, faults []fault, sleepMS int) (code int, done bool) {
	if sleepMS > 0 {
		time.Sleep(time.Duration(sleepMS) * time.Millisecond)
	}
	f, err := s.d.takeFault(owner, command, faults)
	if err != nil {
		return s.fail(1, "Perforce server error:\n\tstandin: fault state: %v", err), true
	}
	if f == nil {
		return 0, false
	}
	if f.SleepMS > 0 {
		time.Sleep(time.Duration(f.SleepMS) * time.Millisecond)
	}
	if f.Stdout != "" {
		io.WriteString(s.stdout, f.Stdout)
	}
	if f.Stderr != "" {
		s.errorf("%s", strings.TrimSuffix(f.Stderr, "\n"))
	}
	if f.Exit == 0 && f.Stderr == "" && f.Stdout == "" {
		return 0, false // a pure delay: carry on normally
	}
	return f.Exit, true
}

func (s *session) usageError(detail string) int {
	msg := "Usage: p4 [ options ] command [ arg ... ]\n    Try 'p4 help' for info."
	if detail != "" {
		msg += "\n" + detail
	}
	return s.fail(1, "%s", msg)
}

func (s *session) errorf(format string, args ...any) {
	fmt.Fprintf(s.stderr, format+"\n", args...)
}

func (s *session) fail(code int, format string, args ...any) int {
	s.errorf(format, args...)
	return code
}

// kv and record keep fields in the order the real server sends them; a map
// would scramble it.
type kv struct{ k, v string }
type record []kv

func (s *session) emit(r record) {
	if !s.json {
		for _, f := range r {
			if f.k == "data" {
				io.WriteString(s.stdout, f.v)
				continue
			}
			fmt.Fprintf(s.stdout, "... %s %s\n", f.k, f.v)
		}
		fmt.Fprintln(s.stdout)
		return
	}
	var b strings.Builder
	b.WriteByte('{')
	for i, f := range r {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(jsonString(f.k))
		b.WriteByte(':')
		b.WriteString(jsonString(f.v))
	}
	b.WriteString("}\n")
	io.WriteString(s.stdout, b.String())
}

// chunks splits s into pieces of at most n bytes on rune boundaries, as the
// server streams large content in several data records.
func chunks(s string, n int) []string {
	var out []string
	for len(s) > n {
		cut := n
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		if cut == 0 {
			cut = n
		}
		out = append(out, s[:cut])
		s = s[cut:]
	}
	if s != "" {
		out = append(out, s)
	}
	return out
}

// commonDir is the longest directory prefix (ending in "/") of the files.
func commonDir(files []file) string {
	paths := make([]string, len(files))
	for i, f := range files {
		paths[i] = f.Path
	}
	sort.Strings(paths)
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

// jsonString encodes s as a JSON string without HTML escaping: the real
// client writes "<" and "&" as they are.
func jsonString(s string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // encoding a string cannot fail
	return strings.TrimSuffix(b.String(), "\n")
}
