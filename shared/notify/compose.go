// Package notify owns the review e-mail message: a decided letter
// (shared/letter) addressed to one recipient, with its deterministic
// headers and reference, rendered as the MIME message both e-mail channels
// send. It sends nothing: those channels are
// shared/smtpmail and shared/ses, and the outbox row that says whether a
// Key was already notified belongs to the caller (shared/notifystage).
package notify

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"net/mail"
	"strings"
	"time"

	gomail "github.com/wneessen/go-mail"

	"github.com/criticizer/criticizer/shared/delivery"
	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/letter"
)

// Header names Criticizer adds to every review e-mail.
const (
	HeaderKey = "X-Criticizer-Key" // Key.IdempotencyToken
	HeaderJob = "X-Criticizer-Job" // the job id, for support
	userAgent = "Criticizer"
)

// Message is a composed review e-mail. Rendering it (Bytes) is
// deterministic: Message-ID and MIME boundary come from the Key.
type Message struct {
	Key       delivery.Key
	From      string // RFC 5322 From header value
	To        string // the Key's recipient
	Subject   string
	MessageID string // with angle brackets; see delivery.MessageIDOf
	Token     string // the delivery token; see Envelope.Secret
	JobID     string
	Date      time.Time
	Text      string // text/plain body
	HTML      string // text/html alternative; empty for none
}

// Envelope is what the e-mail is sent as: the delivery's settings.
type Envelope struct {
	// From is the RFC 5322 From ("Criticizer <criticizer@example.com>"),
	// whose domain ends the Message-ID.
	From string
	// HTML adds the text/html alternative to the text/plain body.
	HTML bool
	// Secret keys the token (Message-ID, X-Criticizer-Key, the reference
	// line) as the outbox row does; nil (tests, previews): the unkeyed token.
	Secret *delivery.Secret
	// Date is the Date header (zero: job.Now()): tests fix it to compare bytes.
	Date time.Time
}

// Compose writes the letter of in and addresses it to k (tests, previews):
// the stage addresses the letter decided with the review (New).
func Compose(k delivery.Key, in letter.Content, env Envelope) (*Message, error) {
	return New(letter.Write(k.Changelist, k.ReviewVersion, in), k, env)
}

// New is l addressed to k's recipient as env says. A malformed key or
// recipient is SCHEMA_INVALID, a malformed From (configuration) INTERNAL_BUG.
func New(l letter.Letter, k delivery.Key, env Envelope) (*Message, error) {
	if err := k.Validate(); err != nil {
		return nil, failure.Wrap(failure.SchemaInvalid, err)
	}
	from, err := mail.ParseAddress(env.From)
	if err != nil {
		return nil, failure.Errorf(failure.InternalBug, "notify: from address %q: %w", env.From, err)
	}
	date := env.Date
	if date.IsZero() {
		date = job.Now()
	}
	token := k.IdempotencyToken()
	if env.Secret != nil {
		token = env.Secret.Token(k)
	}
	m := &Message{
		Key:       k,
		From:      from.String(),
		To:        strings.TrimSpace(k.Recipient),
		Subject:   l.Subject,
		MessageID: delivery.MessageIDOf(k.Changelist, k.ReviewVersion, token, from.Address[strings.LastIndexByte(from.Address, '@')+1:]),
		Token:     token,
		JobID:     l.JobID,
		Date:      date,
	}
	text, html := l.Ended(token)
	m.Text = text
	if env.HTML {
		m.HTML = html
	}
	return m, nil
}

// Bytes returns m rendered as an RFC 5322 message (CRLF line endings, MIME,
// quoted-printable UTF-8 parts).
func (m *Message) Bytes() ([]byte, error) {
	g, err := m.Mail("")
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if _, err := g.WriteTo(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// Mail converts m into a fresh go-mail message (its per-message delivery
// state must not leak between attempts); envelopeFrom, when set, is the
// SMTP MAIL FROM (bounce address).
func (m *Message) Mail(envelopeFrom string) (*gomail.Msg, error) {
	g := gomail.NewMsg(gomail.WithBoundary(boundary(m.Key)), gomail.WithNoDefaultUserAgent())
	if err := g.From(m.From); err != nil {
		return nil, failure.Errorf(failure.InternalBug, "notify: from %q: %w", m.From, err)
	}
	if err := g.To(m.To); err != nil {
		return nil, failure.Errorf(failure.SchemaInvalid, "notify: recipient %q: %w", m.To, err)
	}
	if envelopeFrom != "" {
		if err := g.EnvelopeFrom(envelopeFrom); err != nil {
			return nil, failure.Errorf(failure.InternalBug, "notify: envelope from %q: %w", envelopeFrom, err)
		}
	}
	g.Subject(m.Subject)
	g.SetGenHeader(gomail.HeaderMessageID, m.MessageID)
	g.SetDateWithValue(m.Date)
	g.SetUserAgent(userAgent) // fixed, not versioned: a release must not change the bytes of a retry
	// RFC 3834: keeps vacation responders from answering a robot.
	g.SetGenHeader(gomail.Header("Auto-Submitted"), "auto-generated")
	g.SetGenHeader(gomail.Header(HeaderKey), m.DeliveryToken())
	if m.JobID != "" {
		g.SetGenHeader(gomail.Header(HeaderJob), m.JobID)
	}
	g.SetBodyString(gomail.TypeTextPlain, m.Text)
	if m.HTML != "" {
		g.AddAlternativeString(gomail.TypeTextHTML, m.HTML)
	}
	return g, nil
}

// DeliveryToken is the message's delivery token (a Message built by hand may lack it).
func (m *Message) DeliveryToken() string {
	if m.Token != "" {
		return m.Token
	}
	return m.Key.IdempotencyToken()
}

// boundary is derived from the key (go-mail's is random) so the bytes are
// reproducible; from another input than the token the body quotes, so it
// cannot occur in the body.
func boundary(k delivery.Key) string {
	sum := sha256.Sum256([]byte(delivery.KeyScheme + "\x00boundary\x00" + k.String()))
	return "criticizer-" + hex.EncodeToString(sum[:16])
}
