package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/outcome"
	"github.com/criticizer/criticizer/shared/rerun"
)

// Recorded is what reviewers did with real findings (`criticizer outcomes
// export`): the fate of each fingerprint, and each kind's judged tally
// (category and outcome.Kind: rule id or normalised title), so a
// candidate's findings on the corpus can be judged by what reviewers did
// with the same finding, or with findings of its kind.
type Recorded struct {
	Records []outcome.Record
	byFP    map[string]outcome.Fate
	byKind  map[string]*[2]int // category#kind → accepted, dismissed
}

// loadOutcomes reads an export: one outcome.Record as JSON a line. A line
// that is not one is an error naming it: verdicts on part of the file
// would mislead.
func loadOutcomes(path string) (*Recorded, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := &Recorded{byFP: map[string]outcome.Fate{}, byKind: map[string]*[2]int{}}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var rec outcome.Record
		if err := json.Unmarshal([]byte(line), &rec); err != nil || rec.Fingerprint == "" || rec.Fate == "" {
			return nil, fmt.Errorf("%s line %d: not an outcome record (criticizer outcomes export): %v", path, n, err)
		}
		r.add(rec)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(r.Records) == 0 {
		return nil, fmt.Errorf("%s holds no outcome records", path)
	}
	return r, nil
}

func (r *Recorded) add(rec outcome.Record) {
	r.Records = append(r.Records, rec)
	r.byFP[rec.Fingerprint] = rec.Fate
	k := rec.Category + "#" + rec.Kind
	t := r.byKind[k]
	if t == nil {
		t = &[2]int{}
		r.byKind[k] = t
	}
	switch {
	case rec.Fate.Accepted():
		t[0]++
	case rec.Fate.Dismissive():
		t[1]++
	}
}

// Verdicts is one configuration's findings judged by the recorded outcomes:
// the same fingerprint's fate where it was recorded, else its kind's
// majority (more accepted than dismissed, or the other way); a tie, a kind
// with no judged record, or none at all gives no verdict.
type Verdicts struct {
	Findings, ByFingerprint, ByKind int
	Accepted, Dismissed, NoVerdict  int
}

// add judges one review's findings on the changeset they were made on.
func (p *Verdicts) add(r *Recorded, res domain.ReviewResult, cs *domain.Changeset) {
	for _, c := range rerun.Distinct(res.Findings, cs) {
		p.Findings++
		if fate, ok := r.byFP[c.Fingerprint]; ok && (fate.Accepted() || fate.Dismissive()) {
			p.ByFingerprint++
			p.count(fate.Accepted())
			continue
		}
		t := r.byKind[c.Category+"#"+outcome.Kind(c.Finding)]
		if t == nil || t[0] == t[1] {
			p.NoVerdict++
			continue
		}
		p.ByKind++
		p.count(t[0] > t[1])
	}
}

func (p *Verdicts) count(accepted bool) {
	if accepted {
		p.Accepted++
	} else {
		p.Dismissed++
	}
}

// printVerdicts writes the recorded acceptance of each prompt version and
// model (real traffic), then each configuration's verdicts, as Markdown.
func printVerdicts(w io.Writer, path string, r *Recorded, scores []Score) {
	fmt.Fprintf(w, "\nRecorded outcomes in %s (%d findings; e-mail-only ones are unknown, never accepted):\n\n", path, len(r.Records))
	fmt.Fprintln(w, "| recorded | findings | accepted | dismissed | open | unknown | acceptance |\n| --- | --- | --- | --- | --- | --- | --- |")
	for _, d := range []outcome.Dimension{outcome.ByPromptVersion, outcome.ByModel} {
		for _, row := range outcome.Acceptance(r.Records, d, 0) {
			fmt.Fprintf(w, "| %s %s | %d | %d | %d | %d | %d | %s |\n", strings.ReplaceAll(string(d), "_", " "), row.Key, row.Findings, row.Accepted, row.Dismissed, row.Open, row.Unknown,
				share(row.Accepted, row.Accepted+row.Dismissed))
		}
	}
	fmt.Fprintf(w, "\nThe corpus's findings judged by them (same fingerprint, else the kind's majority):\n\n")
	fmt.Fprintln(w, "| provider | model | prompt | findings | by fingerprint | by kind | would be accepted | would be dismissed | no verdict | acceptance |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
	for _, s := range scores {
		p := s.Verdicts
		fmt.Fprintf(w, "| %s | %s | %s | %d | %d | %d | %d | %d | %d | %s |\n", s.Provider, s.Model, s.PromptVersion, p.Findings, p.ByFingerprint, p.ByKind,
			p.Accepted, p.Dismissed, p.NoVerdict, share(p.Accepted, p.Accepted+p.Dismissed))
	}
}

func share(a, n int) string {
	if n == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.2f (%d of %d)", float64(a)/float64(n), a, n)
}
