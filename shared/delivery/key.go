// Package delivery owns the identity of one e-mail delivery: the Key tuple
// (changelist, recipient, review version) and what derives from it (the
// idempotency token, the deterministic Message-ID), and the one interface
// every channel implements (Channel: send, lookup, classify). It depends on
// no outside system, so storing a row never links a mail library.
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

// Key is the outbox identity (changelist_id, recipient, review_version):
// "this recipient has been told about this version". The token, Message-ID
// and MIME boundary derive from it, so a retry produces the same e-mail.
type Key struct {
	Changelist    int64
	Recipient     string
	ReviewVersion int
}

// KeyScheme versions the hash input. Changing how a token is derived would
// make in-flight retries look like new intents, so a change must bump this.
const KeyScheme = "criticizer.notify.v1"

// String returns the canonical form "<changelist>/v<review_version>/<recipient>",
// the recipient canonical (Canonical) and last: only it may contain '/'.
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
// brackets included ("<cl12345.v1.3f2a…@example.com>"), with the token's
// first 128 bits: unique, and the header is not folded. SMTP has no
// idempotency header, so it is rule OB-3's provider token: settle and
// reconcile recognise a re-send by it. An empty domain is
// "criticizer.invalid" (RFC 2606), not the host name.
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

// Canonical is the one rule for a recipient address, trimmed and
// lower-cased, used wherever recipients are compared, stored or keyed: a
// second spelling past it would be a second e-mail to one mailbox.
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
