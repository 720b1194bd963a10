package main

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
)

// Accepted is one baseline entry: a check the project accepts on the named
// resources ("*" = any) in the named environments (empty = all), and why.
type Accepted struct {
	Tool      string   `json:"tool"`
	Check     string   `json:"check"`
	Resources []string `json:"resources"`
	Envs      []string `json:"envs,omitempty"`
	Reason    string   `json:"reason"`
}

func (a Accepted) covers(f Finding) bool {
	return a.Tool == f.Tool && a.Check == f.Check &&
		(len(a.Envs) == 0 || slices.Contains(a.Envs, f.Env)) &&
		(slices.Contains(a.Resources, "*") || slices.Contains(a.Resources, f.Resource))
}

// Baseline is the checked-in list of accepted findings.
type Baseline struct {
	Accepted []Accepted `json:"accepted"`
}

func loadBaseline(path string) (*Baseline, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var base Baseline
	d := json.NewDecoder(f)
	d.DisallowUnknownFields()
	if err := d.Decode(&base); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &base, nil
}

// Report is the verdict over all findings.
type Report struct {
	New      []Finding  // not accepted by the baseline
	Invalid  []string   // baseline entries that may not stand (no reason, accepting an error)
	Stale    []Accepted // entries that matched nothing: delete them
	Accepted int
}

// OK reports whether nothing is new, nothing invalid and nothing stale.
func (r Report) OK() bool { return len(r.New) == 0 && len(r.Invalid) == 0 && len(r.Stale) == 0 }

func (r Report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "cfncheck: %d finding(s) accepted by the baseline\n", r.Accepted)
	for _, s := range r.Invalid {
		fmt.Fprintf(&b, "INVALID baseline entry: %s\n", s)
	}
	for _, a := range r.Stale {
		fmt.Fprintf(&b, "STALE baseline entry (matches nothing; delete it): %s %s %v\n", a.Tool, a.Check, a.Resources)
	}
	for _, f := range r.New {
		fmt.Fprintf(&b, "NEW %s\n", f)
	}
	return b.String()
}

// Judge sorts findings into accepted and new, and checks the baseline
// itself: every entry needs a reason, none may accept a cfn-lint error, and
// every entry must still match something.
func (b *Baseline) Judge(findings []Finding) Report {
	var r Report
	used := make([]bool, len(b.Accepted))
	for _, a := range b.Accepted {
		switch {
		case strings.TrimSpace(a.Reason) == "":
			r.Invalid = append(r.Invalid, fmt.Sprintf("%s %s %v has no reason", a.Tool, a.Check, a.Resources))
		case a.Tool == "cfn-lint" && strings.HasPrefix(a.Check, "E"):
			r.Invalid = append(r.Invalid, fmt.Sprintf("cfn-lint %s is an error: fix it, errors cannot be accepted", a.Check))
		case a.Tool != "cfn-lint" && a.Tool != "checkov":
			r.Invalid = append(r.Invalid, fmt.Sprintf("%q: tool must be cfn-lint or checkov", a.Tool))
		case len(a.Resources) == 0:
			r.Invalid = append(r.Invalid, fmt.Sprintf("%s %s names no resources (use [\"*\"] for all)", a.Tool, a.Check))
		}
	}
	for _, f := range findings {
		ok := false
		if !f.IsError() {
			for i, a := range b.Accepted {
				if a.covers(f) {
					used[i], ok = true, true
				}
			}
		}
		if ok {
			r.Accepted++
		} else {
			r.New = append(r.New, f)
		}
	}
	for i, a := range b.Accepted {
		if !used[i] {
			r.Stale = append(r.Stale, a)
		}
	}
	return r
}
