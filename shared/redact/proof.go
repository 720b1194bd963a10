package redact

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/zricethezav/gitleaks/v8/config"
)

// Proof of redaction: fetch redacts a changeset once and records in the job
// record a proof naming the rule set and the SHA-256 of the artifact's JSON;
// the llm stage's guard verifies it instead of re-scanning megabytes of diff
// (GuardPrompt), and scans only what else enters the prompt. It needs no key:
// its integrity is the job record's (owner-guarded conditional writes).
// Format: "rv1.<fingerprint of rule set and policy>.<sha256 hex>"; a proof
// made under another policy does not vouch for the artifact: it is scanned.

const proofScheme = "rv1"

var (
	// ErrNoProof: the job carries no proof (fetched before proofs existed);
	// scan everything.
	ErrNoProof = errors.New("redact: no proof of redaction")
	// ErrStaleProof: the artifact was redacted by another rule set (a
	// deploy between fetch and review); scan everything.
	ErrStaleProof = errors.New("redact: proof made by another rule set")
	// ErrProofMismatch: the artifact is not what fetch redacted. Block.
	ErrProofMismatch = errors.New("redact: artifact does not match its proof of redaction")
)

// ownRulesVersion changes whenever this package's own rules redact differently.
const ownRulesVersion = "2"

var (
	fpOnce sync.Once
	fp     string
)

// rulesFingerprint names the rule set: gitleaks' config and ours.
func rulesFingerprint() string {
	fpOnce.Do(func() {
		sum := sha256.Sum256([]byte(ownRulesVersion + "\x00" + config.DefaultConfig))
		fp = hex.EncodeToString(sum[:])
	})
	return fp
}

// fingerprint names the rule set and r's policy.
func (r *Redactor) fingerprint() string {
	p, _ := json.Marshal(r.policy)
	sum := sha256.Sum256([]byte(rulesFingerprint() + "\x00" + string(p)))
	return hex.EncodeToString(sum[:8])
}

// Seal returns the proof for an artifact v that r redacted, as stored: the
// digest is of v's JSON encoding, which is what the artifact store writes.
func (r *Redactor) Seal(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("redact: seal: %w", err)
	}
	return r.SealDigest(sha256.Sum256(b)), nil
}

// SealDigest is Seal for an artifact written as a stream: sum is the
// SHA-256 of the bytes stored, which must be v's JSON for Verify to accept.
func (r *Redactor) SealDigest(sum [sha256.Size]byte) string {
	return proofScheme + "." + r.fingerprint() + "." + hex.EncodeToString(sum[:])
}

// Verify checks proof against the artifact v as read back: nil when sealed
// under r's rules and policy; ErrNoProof or ErrStaleProof when the proof
// cannot vouch (scan it); ErrProofMismatch when v differs (block).
func (r *Redactor) Verify(proof string, v any) error {
	if proof == "" {
		return ErrNoProof
	}
	parts := strings.Split(proof, ".")
	if len(parts) != 3 || parts[0] != proofScheme {
		return fmt.Errorf("%w: malformed proof", ErrProofMismatch)
	}
	if parts[1] != r.fingerprint() {
		return ErrStaleProof
	}
	got, err := r.Seal(v)
	if err != nil {
		return err
	}
	if got != proof {
		return ErrProofMismatch
	}
	return nil
}

// Proven is the lines covered by a verified proof, built once per artifact.
type Proven struct{ lines map[string]struct{} }

// NewProven indexes the lines of texts whose proof verified.
func NewProven(texts ...string) *Proven {
	p := &Proven{lines: map[string]struct{}{}}
	for _, t := range texts {
		for line := range strings.SplitSeq(t, "\n") {
			p.lines[line] = struct{}{}
		}
	}
	return p
}

func (p *Proven) has(line string) bool {
	if p == nil {
		return false
	}
	_, ok := p.lines[line]
	return ok
}

// GuardPrompt is the pre-submit guard: it scans prompt for secrets, except
// lines verbatim in proven (redacted once already). Everything else
// (instructions, headers, a description re-encoded as JSON) is scanned;
// matches carry prompt line numbers. A nil proven scans it all.
func (r *Redactor) GuardPrompt(prompt string, proven *Proven) ([]Match, error) {
	if proven == nil {
		_, ms, err := r.Redact(prompt)
		return ms, err
	}
	var rest strings.Builder
	var lineNo []int // rest's line i is prompt line lineNo[i]
	n := 0
	for line := range strings.SplitSeq(prompt, "\n") {
		n++
		if proven.has(line) {
			continue
		}
		rest.WriteString(line)
		rest.WriteByte('\n')
		lineNo = append(lineNo, n)
	}
	_, ms, err := r.Redact(rest.String())
	if err != nil {
		return nil, err
	}
	for i := range ms {
		ms[i].Line = lineNo[ms[i].Line-1]
	}
	return ms, nil
}
