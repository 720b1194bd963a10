package result

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// A candidate is promotable only with enough jobs measured, valid findings
// per job at or above the floor and dropped findings at or below the
// ceiling; the refusal names each failed check.
func TestPromotable(t *testing.T) {
	slo := SLO{MinValidPerJob: 0.1, MaxDroppedPerJob: 0.5}
	for _, tt := range []struct {
		name   string
		canary Canary
		refuse []string // "" parts of the refusal; none: promotable
	}{
		{"meets both", Canary{Jobs: 40, ValidPerJob: 0.2, DroppedPerJob: 0.1}, nil},
		{"on the edges", Canary{Jobs: 20, ValidPerJob: 0.1, DroppedPerJob: 0.5}, nil},
		{"too few jobs", Canary{Jobs: 19, ValidPerJob: 5, DroppedPerJob: 0}, []string{"19 job(s) measured, at least 20"}},
		{"finds too little", Canary{Jobs: 40, ValidPerJob: 0.05, DroppedPerJob: 0}, []string{"valid findings per job 0.050 below the SLO 0.100"}},
		{"drops too much", Canary{Jobs: 40, ValidPerJob: 1, DroppedPerJob: 0.6}, []string{"dropped findings per job 0.600 above the SLO 0.500"}},
		{"both", Canary{Jobs: 40, ValidPerJob: 0, DroppedPerJob: 2}, []string{"valid findings", "dropped findings"}},
	} {
		err := slo.Promotable(tt.canary, 20)
		if (err == nil) != (tt.refuse == nil) || (err != nil && !errors.Is(err, ErrNotPromotable)) {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		for _, part := range tt.refuse {
			if !strings.Contains(err.Error(), part) {
				t.Errorf("%s: %v, want it to say %q", tt.name, err, part)
			}
		}
	}
}

// The model canary serves its candidate to about its share of jobs, the
// same model to a job every time, drawn independently of the prompt
// canary's share; off, or at 0 %, every job gets the stable model.
func TestModelRolloutPick(t *testing.T) {
	const stable, cand = "stable-model", "candidate-model"
	r := ModelRollout{Candidate: cand, Percent: 30}
	var got, both int
	for i := range 2000 {
		id := fmt.Sprintf("job-%04d", i)
		m := r.Pick(id, stable)
		if m != r.Pick(id, stable) {
			t.Fatalf("%s: the pick is not stable", id)
		}
		if m == cand {
			got++
			if Bucket(id) < 30 {
				both++
			}
		}
	}
	if got < 500 || got > 700 {
		t.Errorf("candidate model served %d of 2000 jobs, want about 600", got)
	}
	// Independent buckets: about 30 % of the candidate model's jobs also
	// fall in the prompt's 30 %, not all (one salt) or none.
	if both < got/5 || both > got*2/5 {
		t.Errorf("%d of %d candidate-model jobs in the prompt's share: the buckets are not independent", both, got)
	}
	for _, off := range []ModelRollout{{}, {Candidate: cand}, {Percent: 50}} {
		for i := range 100 {
			if m := off.Pick(fmt.Sprintf("job-%d", i), stable); m != stable {
				t.Fatalf("%+v served %s", off, m)
			}
		}
	}
	if m := (ModelRollout{Candidate: cand, Percent: 100}).Pick("any", stable); m != cand {
		t.Errorf("100 %%: got %s", m)
	}
}

func TestModelRolloutValidate(t *testing.T) {
	for _, tt := range []struct {
		r    ModelRollout
		want string // "" valid
	}{
		{ModelRollout{}, ""},
		{ModelRollout{Candidate: "b", Percent: 10}, ""},
		{ModelRollout{Candidate: "a", Percent: 10}, "is the stable model"},
		{ModelRollout{Percent: 10}, "no candidate model"},
	} {
		err := tt.r.Validate("a")
		if (err == nil) != (tt.want == "") || (err != nil && !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("%+v: %v, want %q", tt.r, err, tt.want)
		}
	}
}
