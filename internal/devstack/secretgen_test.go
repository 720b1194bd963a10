package devstack

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestConformRegeneratesOnlyWhatAWSCouldNotHaveGenerated(t *testing.T) {
	tests := []struct {
		name      string
		g         secretGenerator
		value     string
		wantFixed bool
	}{
		{"alphanumeric bare value is kept", secretGenerator{ExcludePunctuation: true}, "abcXYZ0123", false},
		{"bare value starting with a brace", secretGenerator{ExcludePunctuation: true}, "{abc!def12", true},
		{"punctuation inside", secretGenerator{ExcludePunctuation: true}, "abc%def", true},
		{"templated field kept", secretGenerator{ExcludePunctuation: true, SecretStringTemplate: `{"user":"criticizer"}`, GenerateStringKey: "ticket"}, `{"user":"criticizer","ticket":"abc123"}`, false},
		{"templated field fixed, other fields kept", secretGenerator{ExcludePunctuation: true, SecretStringTemplate: `{"user":"criticizer"}`, GenerateStringKey: "ticket"}, `{"user":"criti-cizer","ticket":"a\"b{c"}`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, fixed, err := tt.g.conform(tt.value)
			if err != nil {
				t.Fatal(err)
			}
			if fixed != tt.wantFixed {
				t.Fatalf("fixed = %v, want %v", fixed, tt.wantFixed)
			}
			if !fixed {
				if got != tt.value {
					t.Fatalf("kept value changed: %q", got)
				}
				return
			}
			generated, orig := got, tt.value
			if tt.g.SecretStringTemplate != "" {
				var a, b map[string]string
				if err := json.Unmarshal([]byte(got), &a); err != nil {
					t.Fatal(err)
				}
				_ = json.Unmarshal([]byte(tt.value), &b)
				if a["user"] != b["user"] {
					t.Fatalf("other field changed: %q -> %q", b["user"], a["user"])
				}
				generated, orig = a[tt.g.GenerateStringKey], b[tt.g.GenerateStringKey]
			}
			if len(generated) != len(orig) || strings.ContainsFunc(generated, func(r rune) bool { return !strings.ContainsRune(alphanumerics, r) }) {
				t.Fatalf("regenerated %q for %q: want %d letters and digits", generated, orig, len(orig))
			}
		})
	}
}

func TestConformRefusesAValueOfAnotherShape(t *testing.T) {
	g := secretGenerator{ExcludePunctuation: true, SecretStringTemplate: "{}", GenerateStringKey: "api_key"}
	for _, v := range []string{"not json", `{"other":"x"}`} {
		if _, _, err := g.conform(v); err == nil {
			t.Errorf("conform(%q): no error", v)
		}
	}
}
