package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/udiff"
)

// Case is one labelled changelist of the corpus (eval/corpus/*.yaml): the
// files before and after the change, and the defects planted in it. A case
// without defects is a clean change: every finding on it is a false
// positive.
type Case struct {
	Name        string
	Description string   `yaml:"description"`
	Language    string   `yaml:"language"`
	Files       []File   `yaml:"files"`
	Defects     []Defect `yaml:"defects"`
}

// File is one file of a case: its content before (absent for an add) and
// after the change.
type File struct {
	Path   string  `yaml:"path"`
	Action string  `yaml:"action"`
	Before *string `yaml:"before"`
	After  string  `yaml:"after"`
}

// Defect is a planted defect: where (lines of the new revision) and what.
type Defect struct {
	File     string `yaml:"file"`
	Lines    [2]int `yaml:"lines"`
	Category string `yaml:"category"`
}

// loadCorpus reads every case in dir, in name order, and checks each
// label against its file (a defect must name lines of the new revision).
func loadCorpus(dir string) ([]Case, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	slices.Sort(paths)
	var out []Case
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		var c Case
		dec := yaml.NewDecoder(strings.NewReader(string(b)))
		dec.KnownFields(true)
		if err := dec.Decode(&c); err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		c.Name = strings.TrimSuffix(filepath.Base(p), ".yaml")
		if err := c.check(); err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no cases (*.yaml) in %s", dir)
	}
	return out, nil
}

func (c Case) check() error {
	if len(c.Files) == 0 {
		return fmt.Errorf("no files")
	}
	for _, d := range c.Defects {
		i := slices.IndexFunc(c.Files, func(f File) bool { return f.Path == d.File })
		if i < 0 {
			return fmt.Errorf("defect in %s, which the change does not touch", d.File)
		}
		n := strings.Count(c.Files[i].After, "\n")
		if d.Lines[0] < 1 || d.Lines[1] < d.Lines[0] || d.Lines[1] > n {
			return fmt.Errorf("defect lines %v outside %s (%d lines)", d.Lines, d.File, n)
		}
	}
	return nil
}

// Changeset is the case as the fetch stage would hand it over (before
// redaction): one unified diff per file, as p4 diff2 -du prints it.
func (c Case) Changeset(cl int64) domain.Changeset {
	cs := domain.Changeset{Changelist: cl, User: "eval", Client: "eval-ws", Status: "submitted", Description: c.Description}
	for _, f := range c.Files {
		before := ""
		rev := 1
		if f.Before != nil {
			before = *f.Before
			rev = 2
		}
		diff := udiff.Unified(before, f.After, 3)
		if f.Before != nil {
			diff = "--- " + f.Path + "#1\n+++ " + f.Path + "#2\n" + diff
		}
		cs.Files = append(cs.Files, domain.FileChange{DepotPath: f.Path, Action: f.Action, Type: "text", Rev: rev, Diff: diff})
	}
	return cs
}
