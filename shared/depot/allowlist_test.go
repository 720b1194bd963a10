package depot

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/criticizer/criticizer/shared/failure"
)

func TestNewAllowListRejectsInvalidEntries(t *testing.T) {
	tests := []struct {
		name  string
		entry string
	}{
		{"empty", ""},
		{"blank", "   "},
		{"surrounding whitespace", " //depot/a/..."},
		{"no leading slashes", "depot/a/..."},
		{"single leading slash", "/depot/a/..."},
		{"all depots", "//..."},
		{"bare slashes", "//"},
		{"star wildcard", "//depot/a/*"},
		{"star in middle", "//depot/*/src/..."},
		{"ellipsis in middle", "//depot/.../src/..."},
		{"ellipsis suffix without slash", "//depot/a..."},
		{"dot dot segment", "//depot/a/../b/..."},
		{"dot segment", "//depot/./a/..."},
		{"doubled slash", "//depot//a/..."},
		{"trailing slash", "//depot/a/"},
		{"revision specifier", "//depot/a/...#head"},
		{"change specifier", "//depot/a/...@123"},
		{"escape", "//depot/a%40b/..."},
		{"control character", "//depot/a\n/..."},
		{"backslash", `//depot\a/...`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewAllowList([]string{"//depot/ok/...", tt.entry}, nil)
			if err == nil {
				t.Fatalf("NewAllowList accepted %q", tt.entry)
			}
			if got := failure.Classify(err); got != failure.InternalBug {
				t.Errorf("class = %s, want %s (bad configuration)", got, failure.InternalBug)
			}
		})
	}
}

func TestNewAllowListEmpty(t *testing.T) {
	if _, err := NewAllowList(nil, nil); err == nil {
		t.Fatal("empty allow-list accepted")
	}
	if _, err := ParseAllowList(" , \n# only a comment\n", nil); err == nil {
		t.Fatal("allow-list of blanks and comments accepted")
	}
}

func TestParseAllowList(t *testing.T) {
	al, err := ParseAllowList("# reviewed by security, 2025-01\n//depot/projectA/...,//depot/libs/security/...\n\n//depot/tools/build.sh\n//depot/projectA/...\n", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"//depot/libs/security/...", "//depot/projectA/...", "//depot/tools/build.sh"}
	if got := al.Entries(); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("Entries() = %v, want %v", got, want)
	}
	other, err := NewAllowList([]string{"//depot/tools/build.sh", "//depot/projectA/...", "//depot/libs/security/..."}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if al.Digest() != other.Digest() {
		t.Error("digest depends on entry order or duplicates")
	}
}

func TestCheck(t *testing.T) {
	al, err := NewAllowList([]string{"//depot/projectA/...", "//depot/libs/security/...", "//depot/tools/build.sh"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path   string
		allow  bool
		reason string // substring of the denial reason
	}{
		{"//depot/projectA/src/main.c", true, ""},
		{"//depot/projectA/a", true, ""},
		{"//depot/libs/security/crypto/aes.go", true, ""},
		{"//depot/tools/build.sh", true, ""},
		{"//depot/projectA/file%40home.txt", true, ""}, // escaped @ in a file name is an ordinary file
		{"//depot/projectA/100%25.txt", true, ""},
		{"//depot/projectA/star%2A.txt", true, ""},
		{"//depot/projectA/star%2a.txt", true, ""},

		{"//depot/projectA", false, "outside"},  // the directory itself is not a file under it
		{"//depot/projectA/", false, "segment"}, // trailing slash
		{"//depot/projectAB/x.c", false, "outside"},
		{"//depot/projecta/x.c", false, "outside"}, // case-sensitive
		{"//depot/secret/keys.pem", false, "outside"},
		{"//depot/tools/build.sh.bak", false, "outside"},
		{"//depot/tools/build.sh/x", false, "outside"},
		{"//depot/projectA/../secret/keys.pem", false, `".."`},
		{"//depot/projectA/./x.c", false, `"."`},
		{"//depot/projectA//x.c", false, "segment"},
		{"//depot/projectA/...", false, "wildcard"},
		{"//depot/projectA/*.c", false, "wildcard"},
		{"//depot/projectA/x.c#3", false, "revision"},
		{"//depot/projectA/x.c@=12", false, "revision"},
		{"//depot/projectA/%2e%2e/secret", false, "escape"},
		{"//depot/projectA/x%2", false, "escape"},
		{"//depot/projectA/x%", false, "escape"},
		{"/depot/projectA/x.c", false, "begin with //"},
		{"depot/projectA/x.c", false, "begin with //"},
		{"-x//depot/projectA/x.c", false, "begin with //"},
		{"", false, "empty"},
		{"//depot/projectA/x\x00.c", false, "control"},
		{"//depot/projectA/x\n.c", false, "control"},
		{`//depot/projectA\..\secret`, false, "backslash"},
		{"//depot/projectA/\xff", false, "UTF-8"},
		{"//depot/projectA/" + strings.Repeat("a", 2000), false, "too long"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			err := al.Check(tt.path)
			if tt.allow {
				if err != nil {
					t.Fatalf("Check(%q) = %v, want allowed", tt.path, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Check(%q) allowed, want denied", tt.path)
			}
			if !errors.Is(err, ErrDenied) {
				t.Errorf("error %v does not wrap ErrDenied", err)
			}
			if c := failure.Classify(err); c != failure.PolicyRejected {
				t.Errorf("class = %s, want %s", c, failure.PolicyRejected)
			}
			if !strings.Contains(err.Error(), tt.reason) {
				t.Errorf("error %q does not mention %q", err, tt.reason)
			}
		})
	}
}

func TestCheckEmitsSecurityEvent(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&buf, nil))
	al, err := NewAllowList([]string{"//depot/projectA/..."}, log)
	if err != nil {
		t.Fatal(err)
	}
	buf.Reset()
	if err := al.Check("//depot/secret/keys.pem"); err == nil {
		t.Fatal("denied path allowed")
	}
	var ev map[string]any
	if err := json.Unmarshal(buf.Bytes(), &ev); err != nil {
		t.Fatalf("log line %q: %v", buf.String(), err)
	}
	if ev["event"] != "depot_access_denied" || ev["path"] != "//depot/secret/keys.pem" || ev["reason"] != "outside the allow-list" {
		t.Errorf("security event = %v", ev)
	}
	if ev["level"] != "WARN" {
		t.Errorf("level = %v, want WARN", ev["level"])
	}

	buf.Reset()
	if err := al.Check("//depot/projectA/ok.c"); err != nil {
		t.Fatal(err)
	}
	if buf.Len() != 0 {
		t.Errorf("allowed path logged: %s", buf.String())
	}
}

func TestNormalize(t *testing.T) {
	norm, reason := Normalize("//depot/a/b%40c%23d%25e%2Af")
	if reason != "" || norm != "//depot/a/b@c#d%e*f" {
		t.Errorf("Normalize = %q, %q", norm, reason)
	}
	if !ValidSyntax("//depot/a/b.c") || ValidSyntax("//depot/a/../b.c") {
		t.Error("ValidSyntax disagrees with Normalize")
	}
}
