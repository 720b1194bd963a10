package main

import (
	"cmp"
	"crypto/md5"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// change is one changes/<cl>.json fixture (see depot/README.md).
type change struct {
	Change  int64   `json:"change"`
	Status  string  `json:"status"` // submitted or pending
	Shelved bool    `json:"shelved"`
	User    string  `json:"user"`
	Client  string  `json:"client"`
	Time    int64   `json:"time"`
	Desc    string  `json:"desc"`
	Files   []file  `json:"files"`
	Faults  []fault `json:"faults"`
	SleepMS int     `json:"sleep_ms"`
	// EdgeShelf: shelved on an edge server, not promoted, so the commit
	// server the stand-in plays answers "Change N unknown." (reference,
	// "Keywords, trust, tickets, edge servers": a shelf "exists on the commit
	// server only if it was promoted"; the text *unverified*).
	EdgeShelf bool `json:"edge_shelf"`
}

// file is one file of a change fixture.
type file struct {
	Path   string `json:"path"`
	Action string `json:"action"`
	Type   string `json:"type"`
	// Rev is the revision the change created; shelved, the base one (add: 0).
	Rev int `json:"rev"`

	Before       *string `json:"before"`
	BeforeFile   string  `json:"before_file"`
	After        *string `json:"after"`
	AfterFile    string  `json:"after_file"`
	AfterBase64  string  `json:"after_base64"`
	BeforeBase64 string  `json:"before_base64"`
	Diff         *string `json:"diff"` // printed verbatim by diff2 instead of a computed diff
	// A move/add's source and its last revision: filelog's "moved from".
	MovedFrom    string `json:"moved_from"`
	MovedFromRev int    `json:"moved_from_rev"`
	// Integrations are filelog's "how" records in the server's order: an
	// integrated move/add lists "copy from" or "ignored" before "moved from"
	// (perforce/p4transfer test/TestP4Transfer.py, testMoveCopyCombo and
	// testMoveCopyIgnoreCombo, against a real p4d).
	Integrations []integration `json:"integrations"`
}

// integration is one "how" record of a filelog revision.
type integration struct {
	How  string `json:"how"`  // "moved from", "copy from", "ignored", "branch from", …
	File string `json:"file"` // the other file
	SRev string `json:"srev"` // "#none" or "#N": the start of the range (exclusive)
	ERev string `json:"erev"` // "#N": its end
}

// user is one users/<name>.json fixture.
type user struct {
	User     string  `json:"User"`
	Email    string  `json:"Email"`
	FullName string  `json:"FullName"`
	Faults   []fault `json:"faults"`
	SleepMS  int     `json:"sleep_ms"`
}

// fault is an injected failure; see depot/README.md.
type fault struct {
	Command string `json:"command"`
	Stderr  string `json:"stderr"`
	Stdout  string `json:"stdout"`
	// Message is sent as a server message with Severity and Generic.
	Message  string `json:"message"`
	Severity int    `json:"severity"`
	Generic  int    `json:"generic"`
	Exit     int    `json:"exit"`
	Times    int    `json:"times"` // 0: every time
	SleepMS  int    `json:"sleep_ms"`
}

// server is the optional server.json at the depot's root (depot/README.md).
type server struct {
	// Password makes every command but info and login need P4PASSWD (the
	// password or a ticket) or a ticket from "p4 login".
	Password          string `json:"password"`
	TicketTTLMS       int64  `json:"ticket_ttl_ms"`       // default 12 h
	NoHostlessTickets bool   `json:"no_hostless_tickets"` // "login -a" disabled
	// Protect: paths ("..." matches below) the user may not see; ListOnly:
	// may list, not read. Access: the level elsewhere (default "read").
	Protect  []string `json:"protect"`
	ListOnly []string `json:"list_only"`
	Access   string   `json:"access"`
	// HideExclusions is dm.protects.hide=1 (server configurables catalog:
	// "Hide exclusionary protections (protects)"; docs/reference/p4-cli.md,
	// Protections).
	HideExclusions bool `json:"hide_exclusions"`
	// Protections is the table as "p4 protect" spells it, "mode user|group
	// name host path" (command reference, p4 protect); it shapes the
	// listing only, every group line counting as the caller's.
	Protections []string `json:"protections"`
	// TrustFailureStderr prints a refused ssl: key as "Perforce client
	// error:" text on stderr, as the reference describes it, not as -Mj.
	TrustFailureStderr bool   `json:"trust_failure_stderr"`
	LatencyMS          int    `json:"latency_ms"`  // slept once per command
	Fingerprint        string `json:"fingerprint"` // an ssl: server's key, checked against P4TRUST
}

// depot is the fixture "server", read lazily: a command costs what it asks.
type depot struct {
	root    string
	server  server
	changes map[int64]*change // loaded so far; nil entries are known absent
	paths   map[string][]*revision
}

// revision is a file revision the server can serve.
type revision struct {
	change *change
	file   *file
	before bool // the content is the file's "before" (the previous or base revision)
	rev    int  // as shown in output
}

func (r *revision) read(d *depot) (string, error) {
	if r.before {
		return d.content(r.file.Before, r.file.BeforeFile, r.file.BeforeBase64)
	}
	return d.content(r.file.After, r.file.AfterFile, r.file.AfterBase64)
}

func loadDepot(root string) (*depot, error) {
	d := &depot{root: root, changes: map[int64]*change{}}
	err := readJSON(filepath.Join(root, "server.json"), &d.server)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	return d, nil
}

// change returns changelist cl, nil when there is none.
func (d *depot) change(cl int64) (*change, error) {
	if c, ok := d.changes[cl]; ok {
		return c, nil
	}
	var c change
	err := readJSON(filepath.Join(d.root, "changes", strconv.FormatInt(cl, 10)+".json"), &c)
	if errors.Is(err, fs.ErrNotExist) {
		d.changes[cl] = nil
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if c.Change != cl {
		return nil, fmt.Errorf("fixture %d.json: change field is %d", cl, c.Change)
	}
	d.changes[cl] = &c
	return &c, nil
}

// index maps each depot path to its fixture revisions (content stays on disk).
func (d *depot) index() error {
	if d.paths != nil {
		return nil
	}
	entries, err := os.ReadDir(filepath.Join(d.root, "changes"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	var cls []int64
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || e.IsDir() {
			continue
		}
		cl, err := strconv.ParseInt(name, 10, 64)
		if err != nil {
			return fmt.Errorf("fixture %s: name is not a changelist number", e.Name())
		}
		cls = append(cls, cl)
	}
	slices.Sort(cls)
	d.paths = map[string][]*revision{}
	for _, cl := range cls {
		c, err := d.change(cl)
		if err != nil {
			return err
		}
		for i := range c.Files {
			f := &c.Files[i]
			d.paths[f.Path] = append(d.paths[f.Path], &revision{change: c, file: f})
		}
	}
	return nil
}

// size is the length of a file's new content, a content file's without
// reading it.
func (d *depot) size(f *file) (int64, bool) {
	if f.After != nil || f.AfterBase64 != "" {
		content, err := d.content(f.After, "", f.AfterBase64)
		return int64(len(content)), err == nil
	}
	st, err := os.Stat(filepath.Join(d.root, filepath.FromSlash(f.AfterFile)))
	if err != nil || f.AfterFile == "" {
		return 0, false
	}
	return st.Size(), true
}

// digest is the MD5 of a file's new content in upper-case hex.
func (d *depot) digest(f *file) (string, error) {
	content, err := d.content(f.After, f.AfterFile, f.AfterBase64)
	if err != nil {
		return "", err
	}
	sum := md5.Sum([]byte(content))
	return strings.ToUpper(hex.EncodeToString(sum[:])), nil
}

func has(inline *string, name, b64 string) bool { return inline != nil || name != "" || b64 != "" }

func (f *file) hasBefore() bool { return has(f.Before, f.BeforeFile, f.BeforeBase64) }
func (f *file) hasAfter() bool  { return has(f.After, f.AfterFile, f.AfterBase64) }

// protected: server.json hides path; unreadable: hidden or list-only.
func (d *depot) protected(path string) bool { return matchAny(d.server.Protect, path) }

func (d *depot) unreadable(path string) bool {
	return d.protected(path) || matchAny(d.server.ListOnly, path)
}

func matchAny(patterns []string, path string) bool {
	return slices.ContainsFunc(patterns, func(p string) bool {
		prefix, below := strings.CutSuffix(p, "...")
		return below && strings.HasPrefix(path, prefix) || !below && path == p
	})
}

// protectLine is one line of the protections table.
type protectLine struct {
	number     int
	perm, path string
	host, name string // host "" means "*", name "" the caller
	group      bool
	exclude    bool
}

// table is the protections server.json implies: access on //..., then an
// exclusion per list_only path ("=read": only that right removed) and per
// protect path ("list": every right) (command reference, p4 protect).
func (d *depot) table() []protectLine {
	out := []protectLine{{perm: d.access(), path: "//..."}}
	for _, p := range d.server.ListOnly {
		out = append(out, protectLine{perm: "=read", path: p, exclude: true})
	}
	for _, p := range d.server.Protect {
		out = append(out, protectLine{perm: "list", path: p, exclude: true})
	}
	for i := range out {
		out[i].number = i + 1
	}
	return out
}

// explicitTable is server.json's "protections" lines that apply to user.
func (d *depot) explicitTable(user string) ([]protectLine, error) {
	var out []protectLine
	for i, spec := range d.server.Protections {
		f := strings.Fields(spec)
		if len(f) != 5 || (f[1] != "user" && f[1] != "group") {
			return nil, fmt.Errorf("protections line %d %q: want \"mode user|group name host path\"", i+1, spec)
		}
		if f[1] == "user" && f[2] != user && f[2] != "*" {
			continue // another user's line: not the caller's
		}
		path, exclude := strings.CutPrefix(f[4], "-")
		out = append(out, protectLine{number: i + 1, perm: f[0], group: f[1] == "group", name: f[2], host: f[3], path: path, exclude: exclude})
	}
	return out, nil
}

func (d *depot) access() string { return cmp.Or(d.server.Access, "read") }

// maxAccess answers "protects -M path" (reference, Protections: "-M takes
// the path and exclusions into account but still reports a maximum"): only
// an exclusion covering all of path lowers it, hidden ones too
// (*unverified*: the catalog says only that the lines are hidden).
func (d *depot) maxAccess(path string) string {
	switch {
	case coversAll(d.server.Protect, path):
		return "none"
	case coversAll(d.server.ListOnly, path):
		return "list"
	}
	return d.access()
}

// coversAll: one of patterns matches every path spec can name.
func coversAll(patterns []string, spec string) bool {
	sp, specDir := strings.CutSuffix(spec, "...")
	return slices.ContainsFunc(patterns, func(p string) bool {
		pp, patDir := strings.CutSuffix(p, "...")
		return (patDir && strings.HasPrefix(sp, pp)) || (!patDir && !specDir && pp == sp)
	})
}

func (d *depot) content(inline *string, name, b64 string) (string, error) {
	switch {
	case inline != nil:
		return *inline, nil
	case b64 != "":
		b, err := base64.StdEncoding.DecodeString(b64)
		return string(b), err
	case name != "":
		p := filepath.Join(d.root, filepath.FromSlash(name))
		if rel, err := filepath.Rel(d.root, p); err != nil || strings.HasPrefix(rel, "..") {
			return "", fmt.Errorf("content file %q is outside the depot directory", name)
		}
		b, err := os.ReadFile(p)
		return string(b), err
	}
	return "", nil
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("fixture %s: %w", path, err)
	}
	return nil
}

func (d *depot) user(name string) (*user, error) {
	var u user
	err := readJSON(filepath.Join(d.root, "users", name+".json"), &u)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return &u, err
}

// lookup resolves path#rev, path@=shelf, path@change, path#head or path.
func (d *depot) lookup(spec string) (*revision, error) {
	if path, cl, ok := strings.Cut(spec, "@="); ok {
		n, err := strconv.ParseInt(cl, 10, 64)
		if err != nil {
			return nil, errBadSpec
		}
		c, err := d.change(n)
		if err != nil || c == nil || !c.Shelved || c.EdgeShelf {
			return nil, err
		}
		for i := range c.Files {
			f := &c.Files[i]
			if f.Path == path && f.hasAfter() {
				return &revision{change: c, file: f, rev: f.Rev + 1}, nil
			}
		}
		return nil, nil
	}
	if path, cl, ok := strings.Cut(spec, "@"); ok && !strings.ContainsAny(path, "#*") && !strings.Contains(path, "...") {
		n, err := strconv.ParseInt(cl, 10, 64)
		if err != nil || n < 0 {
			return nil, errBadSpec
		}
		return d.asOf(path, n)
	}
	path, revText, hasRev := strings.Cut(spec, "#")
	if strings.ContainsAny(path, "@*") || strings.Contains(path, "...") {
		return nil, errBadSpec
	}
	want := -1 // head
	if hasRev && revText != "head" {
		n, err := strconv.Atoi(revText)
		if err != nil || n < 0 {
			return nil, errBadSpec
		}
		want = n
	}
	if err := d.index(); err != nil {
		return nil, err
	}
	// A change that created rev N also gives rev N-1 (its "before").
	var best *revision
	for _, r := range d.paths[path] {
		c, f := r.change, r.file
		if c.Status != "submitted" {
			continue
		}
		deleted := isDelete(f.Action)
		switch {
		case want == -1:
			if !deleted && f.hasAfter() && (best == nil || f.Rev > best.rev) {
				best = &revision{change: c, file: f, rev: f.Rev}
			}
		case f.Rev == want && !deleted && f.hasAfter():
			return &revision{change: c, file: f, rev: f.Rev}, nil
		case f.Rev-1 == want && want > 0 && f.hasBefore():
			best = &revision{change: c, file: f, before: true, rev: want}
		}
	}
	// A shelved change's base revision is also known from its "before".
	if best == nil && want > 0 {
		for _, r := range d.paths[path] {
			if r.change.Shelved && r.file.Rev == want && r.file.hasBefore() {
				return &revision{change: r.change, file: r.file, before: true, rev: want}, nil
			}
		}
	}
	return best, nil
}

// asOf resolves path@n: the revision of the last submitted change at or
// before n (none if it deleted the file), else the first later change's
// "before", all the fixtures say of the file at n.
func (d *depot) asOf(path string, n int64) (*revision, error) {
	if err := d.index(); err != nil {
		return nil, err
	}
	var last, next *revision
	for _, r := range d.paths[path] { // in changelist order
		if r.change.Status != "submitted" {
			continue
		}
		if r.change.Change <= n {
			last = r
		} else if next == nil {
			next = r
		}
	}
	switch {
	case last != nil:
		if isDelete(last.file.Action) || !last.file.hasAfter() {
			return nil, nil
		}
		return &revision{change: last.change, file: last.file, rev: last.file.Rev}, nil
	case next != nil && next.file.Rev > 1 && next.file.hasBefore():
		return &revision{change: next.change, file: next.file, before: true, rev: next.file.Rev - 1}, nil
	}
	return nil, nil
}

var errBadSpec = errors.New("bad file spec")

// isDelete reports whether action leaves no content at the new revision.
func isDelete(action string) bool {
	return strings.HasSuffix(action, "delete") || action == "purge" || action == "archive"
}
