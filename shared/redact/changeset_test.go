package redact

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// addDiff renders content the way the fetcher renders an added file.
func addDiff(path, content string) string {
	lines := strings.SplitAfter(strings.TrimSuffix(content, "\n"), "\n")
	var b strings.Builder
	b.WriteString("--- /dev/null\n+++ " + path + "#1\n@@ -0,0 +1," + strconv.Itoa(len(lines)) + " @@\n")
	for _, l := range lines {
		b.WriteString("+" + strings.TrimSuffix(l, "\n") + "\n")
	}
	return b.String()
}

// The texts of a changelist as fetch redacts them, one by one: the stand-in
// depot's deploy helper (planted credentials), ordinary code and the
// description; each redaction is reported by rule and line.
func TestRedactsAChangelistsTexts(t *testing.T) {
	deploy, err := os.ReadFile("../../internal/standin/p4/depot/files/12345/deploy.go.after")
	if err != nil {
		t.Fatal(err)
	}
	deployDiff := addDiff("//depot/projectA/tools/deploy/deploy.go", string(deploy))
	ordinary := "--- //depot/projectA/src/net/buffer.c#3\n+++ //depot/projectA/src/net/buffer.c#4\n@@ -20,6 +20,7 @@\n+\tstrcpy(m->text, text);\n"
	tests := []struct {
		name, text, want string
		matches          []Match
	}{
		{"deploy.go's diff", deployDiff, strings.NewReplacer(
			`"AKIAQX7N3PLV2KD5RTWE"`, `"[REDACTED:aws-access-token]"`,
			`"Tr0ub4dor&3-staging"`, `"[REDACTED:password-assignment]"`,
			`deploy-bot:s3cr3t-Relay-42@mail.corp.example.com`, `[REDACTED:uri-credentials]@[REDACTED:internal-host]`,
		).Replace(deployDiff), []Match{{"aws-access-token", 14}, {"password-assignment", 15}, {"internal-host", 18}, {"uri-credentials", 18}}},
		{"ordinary code", ordinary, ordinary, nil},
		{"the description", "Add deploy helper\n\nTested against build07.corp.example.com; ping alice@example.com\n",
			"Add deploy helper\n\nTested against [REDACTED:internal-host]; ping [REDACTED:email]\n", []Match{{"email", 3}, {"internal-host", 3}}},
	}
	r := newRedactor(t, fullPolicy)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ms, err := r.Redact(tt.text)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("redacted:\n%s\nwant:\n%s", got, tt.want)
			}
			if !slices.Equal(ms, tt.matches) {
				t.Errorf("matches %+v, want %+v", ms, tt.matches)
			}
			for _, leak := range []string{"AKIAQX7N3PLV2KD5RTWE", "Tr0ub4dor&3-staging", "s3cr3t-Relay-42", "deploy-bot:", "alice@example.com", "build07"} {
				if strings.Contains(got, leak) {
					t.Errorf("%q survived redaction", leak)
				}
			}
		})
	}
}
