package redact

import (
	"errors"
	"strings"
	"testing"

	"github.com/criticizer/criticizer/shared/domain"
)

func TestProof(t *testing.T) {
	r := newRedactor(t, fullPolicy)
	cs := domain.Changeset{Changelist: 9, Description: "fix [REDACTED:email]\n", Files: []domain.FileChange{
		{DepotPath: "//depot/a.go", Diff: "+x := 1\n+key := \"[REDACTED:aws-access-token]\"\n"}}}
	proof, err := r.Seal(cs)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Verify(proof, cs); err != nil {
		t.Fatalf("verify of the sealed artifact: %v", err)
	}
	tampered := cs
	tampered.Files = []domain.FileChange{{DepotPath: "//depot/a.go", Diff: "+x := 1\n+key := \"AKIAQX7N3PLV2KD5RTWE\"\n"}}
	if err := r.Verify(proof, tampered); !errors.Is(err, ErrProofMismatch) {
		t.Errorf("tampered artifact: %v, want ErrProofMismatch", err)
	}
	if err := r.Verify("rv1.x", cs); !errors.Is(err, ErrProofMismatch) {
		t.Errorf("malformed proof: %v, want ErrProofMismatch", err)
	}
	if err := r.Verify("", cs); !errors.Is(err, ErrNoProof) {
		t.Errorf("no proof: %v", err)
	}
	// A proof made under another policy does not vouch for this one.
	other := newRedactor(t, plainPolicy)
	if err := other.Verify(proof, cs); !errors.Is(err, ErrStaleProof) {
		t.Errorf("other policy: %v, want ErrStaleProof", err)
	}
}

func TestGuardPromptScansOnlyWhatIsNotProven(t *testing.T) {
	r := newRedactor(t, plainPolicy)
	// A proven text is not scanned again: this line stands in for
	// verified content (a real one holds no secret; this one proves the
	// skip).
	provenDiff := "+const k = \"AKIAQX7N3PLV2KD5RTWE\"\n+return nil\n"
	prompt := "Review changelist 9.\n" + provenDiff + "note: password = \"hunter2-extra\"\n"
	ms, err := r.GuardPrompt(prompt, NewProven(provenDiff))
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 1 || ms[0].Rule != "password-assignment" || ms[0].Line != 4 {
		t.Fatalf("matches = %v, want one password-assignment on line 4", ms)
	}
	// Without proven texts, everything is scanned.
	ms, err = r.GuardPrompt(prompt, nil)
	if err != nil {
		t.Fatal(err)
	}
	rules := map[string]bool{}
	for _, m := range ms {
		rules[m.Rule] = true
	}
	if !rules["aws-access-token"] || !rules["password-assignment"] {
		t.Errorf("full scan matches = %v", ms)
	}
	if strings.Count(prompt, "\n") != 4 {
		t.Fatal("test prompt changed shape")
	}
}
