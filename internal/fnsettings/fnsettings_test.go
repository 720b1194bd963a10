package fnsettings

import (
	"slices"
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

// TestEveryReaderReadsIt: every function a setting's ReadBy names looks its
// variables up, with the setting's branches switched on (an SMTP or SES
// provider, an OpenAI or Bedrock model, Swarm and its comments): the
// stack gives a function exactly its declared settings, so a reader listed
// by mistake gets a variable it never reads, and the docs name it wrongly.
func TestEveryReaderReadsIt(t *testing.T) {
	read := map[string]map[string]bool{}
	for _, email := range []string{"smtp", "ses"} {
		for _, model := range []string{"openai", "bedrock"} {
			env := map[string]string{"EMAIL_PROVIDER": email, "LLM_PROVIDER": model, "SWARM_URL": "https://swarm.studio.test",
				"NOTIFY_CHANNELS": "email,swarm-comments", "SWARM_EVENTS_SECRET_ID": "x", "SWARM_API_SECRET_ID": "x", "JOB_PAGE_SECRET_ID": "x"}
			for fn := range Functions {
				keys, _ := Read(fn, env)
				if read[fn] == nil {
					read[fn] = map[string]bool{}
				}
				for _, k := range keys {
					read[fn][k] = true
				}
			}
		}
	}
	for _, s := range settings.Declared {
		if slices.Equal(s.ReadBy, settings.All) {
			continue // config.LoadCommon, for every function
		}
		for _, fn := range s.ReadBy {
			if _, ok := Functions[fn]; !ok {
				t.Errorf("%v: ReadBy names %s, which is not a function", s.Vars, fn)
				continue
			}
			for _, v := range s.Vars {
				if !read[fn][v] {
					t.Errorf("%s: ReadBy names %s, whose loaders never read it", v, fn)
				}
			}
		}
	}
}
