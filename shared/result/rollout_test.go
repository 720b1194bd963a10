package result

import (
	"errors"
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
