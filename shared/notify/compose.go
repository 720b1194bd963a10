// Package notify owns the review e-mail: composing a deterministic
// message from a domain.ReviewResult and rendering it as the MIME message
// both e-mail channels send. It sends nothing: those channels are
// shared/smtpmail and shared/ses, and the outbox row that says whether a
// Key was already notified belongs to the caller (shared/notifystage).
package notify

import (
	"github.com/criticizer/criticizer/shared/delivery"
	"github.com/criticizer/criticizer/shared/job"

	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/mail"
	"strings"
	"time"
	"unicode/utf8"

	gomail "github.com/wneessen/go-mail"

	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/modeltext"
	"github.com/criticizer/criticizer/shared/render"
	"github.com/criticizer/criticizer/shared/rerun"
)

// Header names Criticizer adds to every review e-mail.
const (
	HeaderKey        = "X-Criticizer-Key" // Key.IdempotencyToken
	HeaderJob        = "X-Criticizer-Job" // the job id, for support
	userAgent        = "Criticizer"
	maxSubjectSuffix = 60 // runes of the description kept in the subject
)

// Content is what a review e-mail says; changelist and version come from
// the Key, so it cannot describe another version than its outbox row.
type Content struct {
	Author string
	// Description is the redacted changelist description (first line used).
	Description string
	JobID       string
	Review      domain.ReviewResult
	// From is the RFC 5322 From ("Criticizer <criticizer@example.com>"),
	// whose domain ends the Message-ID.
	From string
	// HTML adds a text/html alternative to the text/plain body.
	HTML bool
	// Secret keys the token (Message-ID, X-Criticizer-Key, the reference
	// line) as the outbox row does; nil (tests, previews): the unkeyed token.
	Secret *delivery.Secret
	// Changeset is the REDACTED changeset: each finding shows its lines of code.
	Changeset  *domain.Changeset
	ReviewURL  string // the Swarm review, when the job came from one
	JobPageURL string // the job's read-only page ("View this review"), when on
	// Date is the Date header (zero: job.Now()), the only input not derived
	// from the review: tests fix it to compare bytes.
	Date time.Time
	// Rerun is the comparison with the previous version (nil for a first):
	// the findings are grouped new / still open / resolved.
	Rerun *rerun.Groups
	// Current is the findings by fingerprint (rerun.Distinct of Review and
	// Changeset) when the caller has them; nil: worked out here.
	Current []rerun.Current
}

// Message is a composed review e-mail. Rendering it (WriteTo, Bytes) is
// deterministic: Message-ID and MIME boundary come from the Key.
type Message struct {
	Key       delivery.Key
	From      string // RFC 5322 From header value
	To        string // the Key's recipient
	Subject   string
	MessageID string // with angle brackets; see delivery.MessageIDOf
	Token     string // the delivery token; see Content.Secret
	JobID     string
	Date      time.Time
	Text      string // text/plain body
	HTML      string // text/html alternative; empty for none
}

// Compose builds the review e-mail for k from in. A malformed key or
// recipient is SCHEMA_INVALID, a malformed From (configuration) INTERNAL_BUG.
func Compose(k delivery.Key, in Content) (*Message, error) {
	if err := k.Validate(); err != nil {
		return nil, failure.Wrap(failure.SchemaInvalid, err)
	}
	from, err := mail.ParseAddress(in.From)
	if err != nil {
		return nil, failure.Errorf(failure.InternalBug, "notify: from address %q: %w", in.From, err)
	}
	date := in.Date
	if date.IsZero() {
		date = job.Now()
	}
	current := in.Current
	if current == nil {
		current = rerun.Distinct(in.Review.Findings, in.Changeset)
	}
	// Every model-written field is made inert once, here, for both parts
	// (the HTML part escapes after): no URL a mail client would link.
	findings := make([]domain.Finding, len(current))
	for i, c := range current {
		findings[i] = inertFinding(c.Finding)
	}
	meta := domain.ReadReviewMeta(in.Review.Meta)
	counts := render.Counts(findings)
	token := k.IdempotencyToken()
	if in.Secret != nil {
		token = in.Secret.Token(k)
	}
	v := view{
		Key:         k,
		Author:      domain.OneLine(in.Author),
		Description: firstLine(in.Description),
		JobID:       domain.OneLine(in.JobID),
		ReviewURL:   safeURL(in.ReviewURL),
		JobPageURL:  safeURL(in.JobPageURL),
		Summary:     modeltext.Plain(strings.TrimSpace(in.Review.Summary)),
		Total:       len(findings),
		Counts:      render.CountLine(counts),
		Files:       render.ByFile(findings, in.Changeset, 0),
		Meta:        meta,
		Schema:      domain.OneLine(in.Review.SchemaVersion),
		Prompt:      domain.OneLine(in.Review.PromptVersion),
		Token:       token,
	}
	if in.Rerun != nil {
		v.Rerun = rerunOf(in.Rerun, current, in.Changeset)
	}
	m := &Message{
		Key:       k,
		From:      from.String(),
		To:        strings.TrimSpace(k.Recipient),
		Subject:   subject(k, counts, len(findings), v.Description, meta, v.Rerun),
		MessageID: delivery.MessageIDOf(k.Changelist, k.ReviewVersion, token, from.Address[strings.LastIndexByte(from.Address, '@')+1:]),
		Token:     token,
		JobID:     v.JobID,
		Date:      date,
		Text:      renderText(v),
	}
	if in.HTML {
		m.HTML = renderHTML(v)
	}
	return m, nil
}

// WriteTo writes m as an RFC 5322 message (CRLF line endings, MIME,
// quoted-printable UTF-8 parts).
func (m *Message) WriteTo(w io.Writer) (int64, error) {
	g, err := m.Mail("")
	if err != nil {
		return 0, err
	}
	return g.WriteTo(w)
}

// Bytes returns the rendered message.
func (m *Message) Bytes() ([]byte, error) {
	var b bytes.Buffer
	if _, err := m.WriteTo(&b); err != nil {
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

// subject is e.g. "[Criticizer] CL 12345 v1: 3 findings (1 high) - Fix login":
// only critical and high counted (they decide whether it is opened now); a
// rerun adds what changed ("; since v1: 1 new, 2 resolved").
func subject(k delivery.Key, cs []render.Count, total int, desc string, meta domain.ReviewMeta, rr *rerunView) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[Criticizer] CL %d v%d: ", k.Changelist, k.ReviewVersion)
	if total == 0 {
		b.WriteString("no findings")
	} else {
		fmt.Fprintf(&b, "%d %s", total, domain.Plural(total, "finding"))
	}
	var urgent []string
	for _, c := range cs {
		if domain.SeverityRank(c.Severity) <= domain.SeverityRank("high") {
			urgent = append(urgent, fmt.Sprintf("%d %s", c.N, c.Severity))
		}
	}
	if len(urgent) > 0 {
		b.WriteString(" (" + strings.Join(urgent, ", ") + ")")
	}
	if meta.Coverage() != "" && !meta.Complete() {
		// Never a clean bill for a review that did not see everything.
		fmt.Fprintf(&b, " [partial: %d of %d files reviewed]", meta.FilesReviewed, meta.FilesTotal)
	}
	if rr != nil {
		fmt.Fprintf(&b, "; since v%d: %d new, %d resolved", rr.Previous, rr.NNew, len(rr.Resolved))
	}
	if desc != "" {
		if utf8.RuneCountInString(desc) > maxSubjectSuffix {
			desc = strings.TrimSpace(string([]rune(desc)[:maxSubjectSuffix-3])) + "..."
		}
		b.WriteString(" - " + desc)
	}
	return b.String()
}

// firstLine returns the first non-blank line of s, cleaned for a header.
func firstLine(s string) string {
	for _, line := range strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n") {
		if l := domain.OneLine(line); l != "" {
			return l
		}
	}
	return ""
}

// inertFinding is f with the fields the model wrote made inert for e-mail.
func inertFinding(f domain.Finding) domain.Finding {
	f.Title, f.Message, f.Suggestion = modeltext.Plain(f.Title), modeltext.Plain(f.Message), modeltext.Plain(f.Suggestion)
	f.Category, f.RuleID, f.Confidence = modeltext.Plain(f.Category), modeltext.Plain(f.RuleID), modeltext.Plain(f.Confidence)
	return f
}
