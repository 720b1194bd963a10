package main

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
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
}

// file is one file of a change fixture.
type file struct {
	Path   string `json:"path"`
	Action string `json:"action"`
	Type   string `json:"type"`
	// Rev is the revision the change created; for a shelved change it is the
	// revision the shelved file is based on (0 for an add).
	Rev int `json:"rev"`

	Before       *string `json:"before"`
	BeforeFile   string  `json:"before_file"`
	After        *string `json:"after"`
	AfterFile    string  `json:"after_file"`
	AfterBase64  string  `json:"after_base64"`
	BeforeBase64 string  `json:"before_base64"`
	Diff         *string `json:"diff"` // printed verbatim by diff2 instead of a computed diff

	before, after string // resolved content
	hasBefore     bool
	hasAfter      bool
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
	Exit    int    `json:"exit"`
	Times   int    `json:"times"` // 0: every time
	SleepMS int    `json:"sleep_ms"`
}

// depot is the loaded fixture "server".
type depot struct {
	root    string
	changes map[int64]*change
}

// revision is a file revision the server can serve.
type revision struct {
	change  *change
	file    *file
	content string
	rev     int // as shown in output
}

func loadDepot(root string) (*depot, error) {
	d := &depot{root: root, changes: map[int64]*change{}}
	entries, err := os.ReadDir(filepath.Join(root, "changes"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || e.IsDir() {
			continue
		}
		cl, err := strconv.ParseInt(name, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("fixture %s: name is not a changelist number", e.Name())
		}
		var c change
		if err := readJSON(filepath.Join(root, "changes", e.Name()), &c); err != nil {
			return nil, err
		}
		if c.Change != cl {
			return nil, fmt.Errorf("fixture %s: change field is %d", e.Name(), c.Change)
		}
		for i := range c.Files {
			if err := d.resolve(&c.Files[i]); err != nil {
				return nil, fmt.Errorf("fixture %s file %d: %w", e.Name(), i, err)
			}
		}
		d.changes[cl] = &c
	}
	return d, nil
}

func (d *depot) resolve(f *file) error {
	var err error
	if f.before, f.hasBefore, err = d.content(f.Before, f.BeforeFile, f.BeforeBase64); err != nil {
		return err
	}
	f.after, f.hasAfter, err = d.content(f.After, f.AfterFile, f.AfterBase64)
	return err
}

func (d *depot) content(inline *string, name, b64 string) (string, bool, error) {
	switch {
	case inline != nil:
		return *inline, true, nil
	case b64 != "":
		b, err := base64.StdEncoding.DecodeString(b64)
		return string(b), true, err
	case name != "":
		p := filepath.Join(d.root, filepath.FromSlash(name))
		if rel, err := filepath.Rel(d.root, p); err != nil || strings.HasPrefix(rel, "..") {
			return "", false, fmt.Errorf("content file %q is outside the depot directory", name)
		}
		b, err := os.ReadFile(p)
		return string(b), true, err
	}
	return "", false, nil
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

// lookup resolves a file spec: path#rev, path@=shelvedChange, or path#head
// / a bare path for the head revision.
func (d *depot) lookup(spec string) (*revision, error) {
	if path, cl, ok := strings.Cut(spec, "@="); ok {
		n, err := strconv.ParseInt(cl, 10, 64)
		if err != nil {
			return nil, errBadSpec
		}
		c := d.changes[n]
		if c == nil || !c.Shelved {
			return nil, nil
		}
		for i := range c.Files {
			f := &c.Files[i]
			if f.Path == path && f.hasAfter {
				return &revision{change: c, file: f, content: f.after, rev: f.Rev + 1}, nil
			}
		}
		return nil, nil
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
	// Submitted changes in changelist order: a change that created rev N also
	// tells us rev N-1 (its "before"), which is how edits get their base.
	var best *revision
	for _, c := range d.sortedChanges() {
		if c.Status != "submitted" {
			continue
		}
		for i := range c.Files {
			f := &c.Files[i]
			if f.Path != path {
				continue
			}
			deleted := isDelete(f.Action)
			switch {
			case want == -1:
				if !deleted && f.hasAfter && (best == nil || f.Rev > best.rev) {
					best = &revision{change: c, file: f, content: f.after, rev: f.Rev}
				}
			case f.Rev == want && !deleted && f.hasAfter:
				return &revision{change: c, file: f, content: f.after, rev: f.Rev}, nil
			case f.Rev-1 == want && want > 0 && f.hasBefore:
				best = &revision{change: c, file: f, content: f.before, rev: want}
			}
		}
	}
	// A shelved change's base revision is also known from its "before".
	if best == nil && want > 0 {
		for _, c := range d.sortedChanges() {
			for i := range c.Files {
				f := &c.Files[i]
				if c.Shelved && f.Path == path && f.Rev == want && f.hasBefore {
					return &revision{change: c, file: f, content: f.before, rev: want}, nil
				}
			}
		}
	}
	return best, nil
}

var errBadSpec = errors.New("bad file spec")

func (d *depot) sortedChanges() []*change {
	out := make([]*change, 0, len(d.changes))
	for _, c := range d.changes {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Change < out[j].Change })
	return out
}

// isDelete reports whether action leaves no content at the new revision.
func isDelete(action string) bool {
	return strings.HasSuffix(action, "delete") || action == "purge" || action == "archive"
}
