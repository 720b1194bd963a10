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

// emf is one EMF line of the acceptance metric: its value and the
// dimension names of its one dimension set.
type emf struct {
	value float64
	dims  map[string]string
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
		v, ok := rec[outcome.AcceptanceMetric].(float64)
		if !ok {
			continue
		}
		aws := rec["_aws"].(map[string]any)["CloudWatchMetrics"].([]any)[0].(map[string]any)
		dims := map[string]string{}
		for _, k := range aws["Dimensions"].([]any)[0].([]any) {
			dims[k.(string)] = rec[k.(string)].(string)
		}
		out = append(out, emf{v, dims})
	}
	return out
}

// Each fate that settles is told once as the acceptance metric — 1
// accepted, 0 dismissed — by prompt version and model and by environment
// alone; reading the same reactions again, an open finding and a move
// within a class tell nothing.
func TestSettledFatesEmitAcceptance(t *testing.T) {
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
	for range 2 {
		if _, err := rd.Read(ctx, 9, nil); err != nil {
			t.Fatal(err)
		}
	}
	got := acceptanceLines(t, buf.Bytes())
	if len(got) != 4 {
		t.Fatalf("emitted %+v: want 2 settled fates × 2 dimension sets", got)
	}
	var sum float64
	for i, e := range got {
		sum += e.value
		want := map[string]string{"Environment": "staging"}
		if i%2 == 0 {
			want["PromptVersion"], want["Model"] = "1.2.0", "m1"
		}
		if len(e.dims) != len(want) || e.dims["Environment"] != "staging" || e.dims["PromptVersion"] != want["PromptVersion"] || e.dims["Model"] != want["Model"] {
			t.Errorf("line %d dimensions %v, want %v", i, e.dims, want)
		}
	}
	if sum != 2 { // the liked one, once per dimension set; the dismissed one is 0
		t.Errorf("values sum to %v: want one accepted (1) and one dismissed (0), each twice", sum)
	}
	// Liked, then addressed: still accepted, nothing new told.
	buf.Reset()
	(*cs)[0].TaskState = swarm.TaskAddressed
	if _, err := rd.Read(ctx, 9, nil); err != nil {
		t.Fatal(err)
	}
	if got := acceptanceLines(t, buf.Bytes()); len(got) != 0 {
		t.Errorf("a move within accepted emitted %+v", got)
	}
}
