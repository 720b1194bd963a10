package repocheck

import (
	"os/exec"
	"strings"
	"testing"
)

// TestFunctionDeps keeps each function binary to what it uses: a package a
// function links but never calls still costs bootstrap size and, for
// packages with init work, cold-start time.
func TestFunctionDeps(t *testing.T) {
	smtp := []string{"github.com/wneessen/go-mail", "github.com/emersion/go-smtp", "github.com/criticizer/criticizer/shared/notify", "github.com/criticizer/criticizer/shared/smtpmail"}
	llm := []string{"github.com/criticizer/criticizer/shared/llm", "github.com/criticizer/criticizer/shared/llmstage"}
	schema := []string{"github.com/santhosh-tekuri/jsonschema", "github.com/criticizer/criticizer/shared/result"}
	// The SDK's default credential chain (shared config, SSO, STS, IMDS): a
	// function takes its role's credentials from the environment (config.AWS).
	chain := []string{"github.com/aws/aws-sdk-go-v2/config", "github.com/aws/aws-sdk-go-v2/service/sso", "github.com/aws/aws-sdk-go-v2/service/sts", "github.com/aws/aws-sdk-go-v2/feature/ec2/imds"}
	stages := []string{"github.com/criticizer/criticizer/shared/fetchstage", "github.com/criticizer/criticizer/shared/llmstage", "github.com/criticizer/criticizer/shared/notifystage"}
	tests := []struct {
		function  string
		forbidden [][]string
	}{
		{"sweeper", [][]string{smtp, llm, schema, chain}},
		{"webhook", [][]string{smtp, llm, schema, chain}},
		{"sesevents", [][]string{smtp, llm, schema, chain}},
		{"fetch", [][]string{smtp, llm, schema, chain}},
		{"llm", [][]string{smtp, chain}},
		{"notify", [][]string{llm, schema, chain}},
		{"jobpage", [][]string{smtp, llm, schema, chain}},
		{"digest", [][]string{llm, schema, chain}},
		// The pre-flight probes each outside system with its own client; it runs no stage.
		{"doctor", [][]string{stages, chain}},
	}
	for _, tt := range tests {
		t.Run(tt.function, func(t *testing.T) {
			out, err := exec.Command("go", "list", "-deps", "github.com/criticizer/criticizer/functions/"+tt.function).CombinedOutput()
			if err != nil {
				t.Fatalf("go list: %v\n%s", err, out)
			}
			deps := strings.Fields(string(out))
			if len(deps) < 50 {
				t.Fatalf("go list -deps printed %d packages; the check would prove nothing", len(deps))
			}
			for _, group := range tt.forbidden {
				for _, prefix := range group {
					for _, d := range deps {
						if d == prefix || strings.HasPrefix(d, prefix+"/") {
							t.Errorf("functions/%s links %s", tt.function, d)
						}
					}
				}
			}
		})
	}
}

// TestLogicDoesNotImportTheStore keeps the stage runtime, the sweeper and the
// delivery settler independent of DynamoDB: they reach jobs through small
// interfaces and branch on shared/job's errors, so a test double is enough
// and the storage mapping can change alone.
func TestLogicDoesNotImportTheStore(t *testing.T) {
	for _, pkg := range []string{"stage", "sweep", "reconcile"} {
		t.Run(pkg, func(t *testing.T) {
			out, err := exec.Command("go", "list", "-f", `{{join .Imports "\n"}}`, "github.com/criticizer/criticizer/shared/"+pkg).CombinedOutput()
			if err != nil {
				t.Fatalf("go list: %v\n%s", err, out)
			}
			imports := strings.Fields(string(out))
			if len(imports) == 0 {
				t.Fatal("go list printed no imports; the check would prove nothing")
			}
			for _, imp := range imports {
				if imp == "github.com/criticizer/criticizer/shared/store" || strings.HasPrefix(imp, "github.com/aws/aws-sdk-go-v2/service/dynamodb") {
					t.Errorf("shared/%s imports %s", pkg, imp)
				}
			}
		})
	}
}

// TestNoFunctionExecutesATemplate keeps text/template and html/template out
// of every function's own code: executing a template reaches reflect's
// MethodByName, and then the linker keeps every exported method of every
// type the binary holds — for the AWS SDK clients, hundreds of operations
// with their serializers (the jobpage bootstrap was 18.8 MB with its
// html/template page, 10.2 MB without; the digest 17.6 MB and 10.9 MB).
// The review e-mail, the digest and the job page write their HTML by hand,
// each value through html.EscapeString. (A dependency may import the
// packages, as spf13/cast does, without executing a template: it costs
// nothing.) Sizes are measured by make bench (bootstrap-MB), not here.
func TestNoFunctionExecutesATemplate(t *testing.T) {
	const module = "github.com/criticizer/criticizer/"
	for _, fn := range []string{"webhook", "fetch", "llm", "notify", "sweeper", "sesevents", "jobpage", "digest"} {
		t.Run(fn, func(t *testing.T) {
			out, err := exec.Command("go", "list", "-deps", "-f", `{{.ImportPath}} {{join .Imports " "}}`, module+"functions/"+fn).CombinedOutput()
			if err != nil {
				t.Fatalf("go list: %v\n%s", err, out)
			}
			lines := strings.Split(strings.TrimSpace(string(out)), "\n")
			own := 0
			for _, line := range lines {
				fields := strings.Fields(line)
				if len(fields) == 0 || !strings.HasPrefix(fields[0], module) {
					continue
				}
				own++
				for _, imp := range fields[1:] {
					if imp == "text/template" || imp == "html/template" {
						t.Errorf("functions/%s links %s, which imports %s: write the output by hand (shared/jobpage/page/html.go)", fn, fields[0], imp)
					}
				}
			}
			if own < 5 {
				t.Fatalf("go list named %d project packages; the check would prove nothing", own)
			}
		})
	}
}
