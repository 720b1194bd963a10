package outcome_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/criticizer/criticizer/shared/outcome"
)

func TestGate(t *testing.T) {
	g := outcome.Gate{Margin: 0.05, MinSample: 30}
	for _, tt := range []struct {
		name              string
		candidate, stable outcome.Measured
		refuse            []string // "" = promotable
	}{
		{"as good", outcome.Measured{40, 0.60}, outcome.Measured{100, 0.60}, nil},
		{"within the margin", outcome.Measured{40, 0.56}, outcome.Measured{100, 0.60}, nil},
		{"better", outcome.Measured{40, 0.9}, outcome.Measured{100, 0.60}, nil},
		{"worse by more than the margin", outcome.Measured{40, 0.50}, outcome.Measured{100, 0.60},
			[]string{"candidate 50.0% accepted of 40 judged", "current 60.0% accepted of 100 judged", "10.0 points below", "margin of 5.0"}},
		{"candidate sample too small", outcome.Measured{29, 0.9}, outcome.Measured{100, 0.60}, []string{"candidate has 29 judged finding(s), at least 30 needed"}},
		{"nothing to compare with", outcome.Measured{40, 0.9}, outcome.Measured{3, 0.60}, []string{"current version has 3 judged finding(s)"}},
	} {
		err := g.Promotable(tt.candidate, tt.stable)
		if tt.refuse == nil {
			if err != nil {
				t.Errorf("%s: refused: %v", tt.name, err)
			}
			continue
		}
		if !errors.Is(err, outcome.ErrWorseAcceptance) {
			t.Errorf("%s: %v, want a refusal", tt.name, err)
			continue
		}
		for _, w := range tt.refuse {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: refusal %q does not say %q", tt.name, err, w)
			}
		}
	}
}
