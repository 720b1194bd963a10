// Package delivery owns the identity of one e-mail delivery: the Key tuple
// (changelist, recipient, review version) and what is derived from it — the
// idempotency token and the deterministic Message-ID. The outbox row, the
// composed message and the provider's delivery records all carry it, and it
// has no dependencies, so storing a row never links a mail library.
package delivery

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/mail"
	"strconv"
	"strings"
)

// Key is the outbox identity tuple (changelist_id, recipient, review_version):
// the unique intent "this recipient has been told about this changelist
// version". Everything deterministic about a delivery — the idempotency token,
// the Message-ID, the MIME boundary — is derived from it, so that a retry of
// the same intent produces the same e-mail.
type Key struct {
	Changelist    int64
	Recipient     string
	ReviewVersion int
}

// KeyScheme versions the hash input. Changing how a token is derived would
// make in-flight retries look like new intents, so a change must bump this.
const KeyScheme = "criticizer.notify.v1"

// String returns the canonical form "<changelist>/v<review_version>/<recipient>".
// The recipient is trimmed and lower-cased: two spellings of one mailbox are
// one intent, and a duplicate e-mail is exactly what the key guards against.
// The recipient comes last because it is the only part that may contain '/'.
func (k Key) String() string {
	return strconv.FormatInt(k.Changelist, 10) + "/v" + strconv.Itoa(k.ReviewVersion) + "/" + Canonical(k.Recipient)
}

// IdempotencyToken returns the hex SHA-256 of the canonical key. It is stable
// across processes and releases (see KeyScheme) and reveals nothing of the
// recipient, so it may appear in headers and logs.
func (k Key) IdempotencyToken() string {
	sum := sha256.Sum256([]byte(KeyScheme + "\x00" + k.String()))
	return hex.EncodeToString(sum[:])
}

// MessageID returns the deterministic RFC 5322 Message-ID for k, angle
// brackets included, e.g. "<cl12345.v1.3f2a…@example.com>". It carries the
// first 128 bits of the token: ample for uniqueness, and short enough that
// the header is not folded. SMTP offers no
// idempotency header, so the Message-ID is the provider idempotency token of
// rule OB-3: receiving systems and the settle and reconcile paths can recognise a
// re-send of the same intent by it. An empty domain falls back to
// "criticizer.invalid" (RFC 2606) rather than leaking the host name.
func (k Key) MessageID(domain string) string {
	domain = strings.ToLower(strings.TrimSpace(domain))
	if domain == "" || strings.ContainsAny(domain, "<>@ \t\r\n") {
		domain = "criticizer.invalid"
	}
	return fmt.Sprintf("<cl%d.v%d.%s@%s>", k.Changelist, k.ReviewVersion, k.IdempotencyToken()[:32], domain)
}

// Validate reports whether k can identify a delivery: a positive changelist,
// a review version of at least 1 and a bare addr-spec recipient.
func (k Key) Validate() error {
	if k.Changelist <= 0 {
		return fmt.Errorf("notify key: changelist must be positive, got %d", k.Changelist)
	}
	if k.ReviewVersion < 1 {
		return fmt.Errorf("notify key: review version must be at least 1, got %d", k.ReviewVersion)
	}
	r := strings.TrimSpace(k.Recipient)
	a, err := mail.ParseAddress(r)
	if err != nil {
		return fmt.Errorf("notify key: recipient %q: %w", r, err)
	}
	// A display name or angle brackets would make two keys for one mailbox.
	if a.Address != r || a.Name != "" {
		return fmt.Errorf("notify key: recipient %q must be a bare address", r)
	}
	return nil
}

// Canonical is the one rule that canonicalizes a recipient address: trimmed
// and lower-cased, so two spellings of one mailbox are one delivery. Every
// place that compares, stores or keys recipients uses it (the outbox row key,
// the fetch stage's recipient list, the webhook's request), because a second
// spelling that slipped past it would be a second e-mail to one mailbox.
func Canonical(addr string) string { return strings.ToLower(strings.TrimSpace(addr)) }

// Canonical returns k with its recipient canonicalized.
func (k Key) Canonical() Key {
	k.Recipient = Canonical(k.Recipient)
	return k
}
