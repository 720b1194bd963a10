package fnsettings

import (
	"strconv"
	"testing"
	"time"

	"github.com/criticizer/criticizer/shared/llm"
	"github.com/criticizer/criticizer/shared/llmstage"
	"github.com/criticizer/criticizer/shared/p4"
	"github.com/criticizer/criticizer/shared/recipients"
	"github.com/criticizer/criticizer/shared/settings"
	"github.com/criticizer/criticizer/shared/smtpmail"
	"github.com/criticizer/criticizer/shared/swarm"
)

// TestCodeDefaultsAreTheDeclared: a package that also works without its
// variable (a zero Config field, a policy built in code) keeps its default
// in a constant; each is the declared default of that variable, so the code
// path and the loader cannot disagree.
func TestCodeDefaultsAreTheDeclared(t *testing.T) {
	secs := func(d time.Duration) int { return int(d / time.Second) }
	tests := []struct {
		variable string
		code     int
	}{
		{"MAX_RECIPIENTS", recipients.DefaultMax},
		{"LLM_MAX_OUTPUT_TOKENS", llm.DefaultMaxTokens},
		{"LLM_PARALLELISM", llmstage.DefaultParallelism},
		{"P4_PARALLELISM", p4.DefaultParallelism},
		{"P4_MAX_FILE_BYTES", p4.DefaultMaxFileBytes},
		{"SMTP_TIMEOUT_SECONDS", secs(smtpmail.DefaultTimeout)},
		{"SWARM_COMMENT_WINDOW_SECONDS", secs(swarm.DefaultCommentWindow)},
	}
	for _, tt := range tests {
		a, ok := settings.Variable(tt.variable)
		if !ok {
			t.Errorf("%s is not declared", tt.variable)
			continue
		}
		if a.Default != strconv.Itoa(tt.code) {
			t.Errorf("%s: declared default %s, the code's %d", tt.variable, a.Default, tt.code)
		}
	}
	if a, _ := settings.Variable("MAX_RECIPIENTS"); a.Max != recipients.HardMax {
		t.Errorf("MAX_RECIPIENTS: declared at most %v, recipients.Parse %d", a.Max, recipients.HardMax)
	}
}
