package devstack

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	swarmstandin "github.com/criticizer/criticizer/internal/standin/swarm"
)

func TestOutputsLocalAPIURL(t *testing.T) {
	o := Outputs{"ApiId": "abc123", "ApiStage": "local"}
	if got := o.LocalAPIURL("http://127.0.0.1:4566/"); got != "http://127.0.0.1:4566/_aws/execute-api/abc123/local" {
		t.Errorf("LocalAPIURL = %s", got)
	}
}

func TestEmulatorEnvDropsAWSSettings(t *testing.T) {
	got := emulatorEnv([]string{"PATH=/bin", "AWS_PROFILE=prod", "AWS_SECRET_ACCESS_KEY=x", "HOME=/root", "TMPDIR=/x"})
	if strings.Join(got, " ") != "PATH=/bin HOME=/root" {
		t.Errorf("env = %v", got)
	}
}

// TestSwarmTestBodyIsTheDocumentedOne: the body read from the guide is valid
// JSON once Swarm has substituted its placeholders, and names the review,
// version and callbacks the webhook needs.
func TestSwarmTestBodyIsTheDocumentedOne(t *testing.T) {
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	body, err := swarmTestBody(filepath.Join(root, "docs", "perforce-and-swarm.md"))
	if err != nil {
		t.Fatal(err)
	}
	s := swarmstandin.NewServer(swarmstandin.Options{})
	out, err := swarmstandin.Substitute(body, s.Values(swarmstandin.Run{ID: 701, Review: 12351, Version: 1, Update: "u", Pass: "p", Fail: "f"}, 12350, "shelved"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Changelist string `json:"changelist_id"`
		Version    string `json:"review_version"`
		Swarm      struct{ Review, Update, Pass, Fail string }
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || doc.Changelist != "12350" || doc.Version != "1" || doc.Swarm.Review != "12351" || doc.Swarm.Update != "u" || doc.Swarm.Fail != "f" {
		t.Fatalf("substituted body %s (%v)", out, err)
	}
	if _, err := swarmTestBody(filepath.Join(root, "README.md")); err == nil {
		t.Fatal("a doc without the body gave one")
	}
}
