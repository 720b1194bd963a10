// Package delivery owns the identity of one e-mail delivery: the Key tuple
// (changelist, recipient, review version) and what is derived from it — the
// idempotency token and the deterministic Message-ID; and the one interface
// every channel implements (Channel: send, lookup, classify). The outbox
// row, the composed message and the provider's delivery records all carry
// the Key, and the package depends on no outside system, so storing a row
// never links a mail library.
package delivery

import (
	"crypto/hmac"
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

// IdempotencyToken returns the hex SHA-256 of the canonical key: the token
// of an outbox without a delivery key (Secret), and of the rows written
// before one existed. Anyone who can list candidate addresses can test
// them against it, so a deployed outbox uses Secret.Token instead.
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
	return MessageIDOf(k.Changelist, k.ReviewVersion, k.IdempotencyToken(), domain)
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

// Secret is the delivery key (Secrets Manager, DELIVERY_KEY_SECRET_ID): the
// HMAC key under which a delivery row names its recipient and its token. A
// plain hash of an address is reversed by hashing a company directory; a
// keyed one is not without the key, so a row keeps the uniqueness promise
// for its whole life and the address leaves with the data (rule ID-3).
type Secret struct{ key []byte }

// RecipientScheme and TokenScheme version the keyed hash inputs; like
// KeyScheme, changing either makes every row a new intent.
const (
	RecipientScheme = "criticizer.rcpt.v1"
	TokenScheme     = "criticizer.notify.v2"
)

// NewSecret returns the delivery key of a secret's value; it refuses one
// shorter than 32 bytes (the generated value is 64 characters).
func NewSecret(value string) (*Secret, error) {
	if len(value) < 32 {
		return nil, fmt.Errorf("delivery key: %d bytes, want at least 32", len(value))
	}
	return &Secret{key: []byte(value)}, nil
}

func (s *Secret) mac(parts ...string) string {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(strings.Join(parts, "\x00")))
	return hex.EncodeToString(m.Sum(nil))
}

// Recipient is the keyed hash of a canonical recipient: what a delivery row
// is keyed by, so two spellings of one mailbox are one row (OB-1).
func (s *Secret) Recipient(addr string) string { return s.mac(RecipientScheme, Canonical(addr)) }

// Token is the keyed idempotency token of k: the Message-ID and the SES tag
// carry it and the row keeps it, so the provider's evidence is found without
// the address (the token reveals nothing of it without the key).
func (s *Secret) Token(k Key) string { return s.mac(TokenScheme, k.String()) }

// MessageIDOf is the Message-ID of a delivery whose token is known: the
// row's stored token after its address is gone. See Key.MessageID.
func MessageIDOf(changelist int64, version int, token, domain string) string {
	domain = strings.ToLower(strings.TrimSpace(domain))
	if domain == "" || strings.ContainsAny(domain, "<>@ \t\r\n") {
		domain = "criticizer.invalid"
	}
	if len(token) > 32 {
		token = token[:32]
	}
	return fmt.Sprintf("<cl%d.v%d.%s@%s>", changelist, version, token, domain)
}
