package outcome_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/criticizer/criticizer/shared/obs"
	"github.com/criticizer/criticizer/shared/outcome"
	"github.com/criticizer/criticizer/shared/store/dynamotest"
	"github.com/criticizer/criticizer/shared/swarm"
)

// emf is one EMF line of an acceptance metric: its name, value and the
// dimensions of its one dimension set.
type emf struct {
	metric string
	value  float64
	dims   map[string]string
}

func acceptanceLines(t *testing.T, b []byte) []emf {
	t.Helper()
	var out []emf
	for _, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var rec map[string]any
		if err := json.Unmarshal(line, &rec); err != nil {
			t.Fatalf("EMF line %s: %v", line, err)
		}
		aws := rec["_aws"].(map[string]any)["CloudWatchMetrics"].([]any)[0].(map[string]any)
		name := aws["Metrics"].([]any)[0].(map[string]any)["Name"].(string)
		if name != outcome.AcceptanceMetric && name != outcome.JudgedMetric {
			continue
		}
		dims := map[string]string{}
		for _, k := range aws["Dimensions"].([]any)[0].([]any) {
			dims[k.(string)] = rec[k.(string)].(string)
		}
		out = append(out, emf{name, rec[name].(float64), dims})
	}
	return out
}

// sums adds up each acceptance metric per dimension set, as CloudWatch's
// Sum over a period does: by "metric" for the environment-only set and
// "metric/version" for PromptVersion and Model.
func sums(t *testing.T, lines []emf) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for _, e := range lines {
		key := e.metric
		if e.dims["PromptVersion"] != "" {
			key += "/" + e.dims["PromptVersion"] + "/" + e.dims["Model"]
		}
		if e.dims["Environment"] != "staging" || len(e.dims) != 1 && len(e.dims) != 3 {
			t.Errorf("%s dimensions %v: want Environment alone or with PromptVersion and Model", e.metric, e.dims)
		}
		out[key] += e.value
	}
	return out
}

// Judged findings are told as the deltas of FindingJudged and
// FindingAccepted, by prompt version and model and by environment alone,
// so that Sum(accepted)/Sum(judged) is the share of findings accepted and
// Sum(judged) the findings judged: reading the same reactions again, an
// open finding and a move within a class tell nothing, and a finding that
// flips class (liked, then "won't fix") stays one judged finding, no
// longer accepted.
func TestJudgedFatesEmitAcceptance(t *testing.T) {
	ctx := context.Background()
	var buf bytes.Buffer
	st := outcome.NewStore(dynamotest.New(), dynamotest.Table).WithMetrics(obs.NewMetrics(&buf, "staging"))
	for _, fp := range []string{"fpA", "fpB", "fpC"} {
		if _, err := st.Posted(ctx, outcome.Record{Review: 9, Fingerprint: fp, Category: "bug", PromptVersion: "1.2.0", Model: "m1", File: "//depot/engine/a.c"}); err != nil {
			t.Fatal(err)
		}
	}
	cs := &comments{
		{ID: 1, User: "svc", Likes: []string{"alice"}},
		{ID: 2, User: "svc"},
		{ID: 3, User: "svc"},
		{ID: 4, User: "bob", Body: "won't fix", ReplyTo: 2},
	}
	rd := &outcome.Reader{Store: st, Rows: rows{posted("fpA", 1), posted("fpB", 2), posted("fpC", 3)}, Comments: cs}
	read := func() map[string]float64 {
		t.Helper()
		buf.Reset()
		if _, err := rd.Read(ctx, 9, nil); err != nil {
			t.Fatal(err)
		}
		return sums(t, acceptanceLines(t, buf.Bytes()))
	}
	day := map[string]float64{}
	add := func(got map[string]float64) {
		for k, v := range got {
			day[k] += v
		}
	}
	add(read())
	add(read()) // the same reactions again
	want := map[string]float64{"FindingJudged": 2, "FindingAccepted": 1, "FindingJudged/1.2.0/m1": 2, "FindingAccepted/1.2.0/m1": 1}
	if !equal(day, want) {
		t.Errorf("one liked, one dismissed, one open, read twice: sums %v, want %v", day, want)
	}
	// Liked, then addressed: still accepted, nothing new told.
	(*cs)[0].TaskState = swarm.TaskAddressed
	if got := read(); len(got) != 0 {
		t.Errorf("a move within accepted emitted %v", got)
	}
	// Addressed, then argued with: still accepted (what people did
	// outranks what anyone said), nothing new told.
	*cs = append(*cs, swarm.Comment{ID: 5, User: "carol", Body: "false positive", ReplyTo: 1})
	if got := read(); len(got) != 0 {
		t.Errorf("a dismissal after an acceptance emitted %v", got)
	}
	// The dismissal of the other one retracted: no longer judged.
	*cs = append(*cs, swarm.Comment{ID: 6, User: "bob", Body: "Fair enough, my mistake", ReplyTo: 2})
	add(read())
	want = map[string]float64{"FindingJudged": 1, "FindingAccepted": 1, "FindingJudged/1.2.0/m1": 1, "FindingAccepted/1.2.0/m1": 1}
	if !equal(day, want) {
		t.Errorf("after the dismissal was retracted: sums %v, want %v (1 judged, accepted)", day, want)
	}
}

func equal(a, b map[string]float64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// FateMoved's deltas for every kind of move: entering, leaving and flipping
// between the accepted and dismissed classes.
func TestJudgedDeltas(t *testing.T) {
	for _, tt := range []struct {
		from, to         outcome.Fate
		judged, accepted float64
		told             bool
	}{
		{outcome.Open, outcome.Liked, 1, 1, true},
		{outcome.Open, outcome.Archived, 1, 0, true},
		{outcome.Unknown, outcome.Resolved, 1, 1, true},
		{outcome.Liked, outcome.Disliked, 0, -1, true},
		{outcome.Dismissed, outcome.Addressed, 0, 1, true},
		{outcome.Liked, outcome.Open, -1, -1, true}, // the like withdrawn
		{outcome.Archived, outcome.Open, -1, 0, true},
		{outcome.Liked, outcome.Verified, 0, 0, false},
		{outcome.Disliked, outcome.Archived, 0, 0, false},
		{outcome.Open, outcome.Unknown, 0, 0, false},
	} {
		var buf bytes.Buffer
		outcome.FateMoved(obs.NewMetrics(&buf, "staging"), outcome.Record{PromptVersion: "1.2.0", Model: "m1"}, tt.from, tt.to)
		lines := acceptanceLines(t, buf.Bytes())
		if !tt.told {
			if len(lines) != 0 {
				t.Errorf("%s → %s emitted %v, want nothing", tt.from, tt.to, lines)
			}
			continue
		}
		got := sums(t, lines)
		want := map[string]float64{"FindingJudged": tt.judged, "FindingAccepted": tt.accepted, "FindingJudged/1.2.0/m1": tt.judged, "FindingAccepted/1.2.0/m1": tt.accepted}
		if len(lines) != 4 || !equal(got, want) {
			t.Errorf("%s → %s: %d lines summing to %v, want both metrics per dimension set: %v", tt.from, tt.to, len(lines), got, want)
		}
	}
}
