// Package sanitize is the one place diagnostic text passes before it leaves
// a stage: error reasons and stacks in the job record, an outbox row's
// last_error, dead-letter payloads, and every string or error field of a log
// record (each function builds its logger with Logs, see coldstart.Load).
// In order: (1) the free text of an upstream reply (an SMTP reply line, which
// may quote the message) is replaced by its codes, recognised by error type
// anywhere in the chain (net/textproto, go-mail's SendError), so callers pass
// the error, not its text; (2) registered secrets (obs.DefaultMasker: every
// value read from Secrets Manager) are masked; (3) the redaction rules run
// with e-mail de-identification and bare-secret detection on
// (redact.Policy.BareSecrets). If redaction fails, the text is withheld.
package sanitize

import (
	"fmt"
	"net/textproto"
	"regexp"
	"strings"
	"sync"

	"github.com/criticizer/criticizer/shared/obs"
	"github.com/criticizer/criticizer/shared/redact"
)

// MaxInput bounds the text redacted; longer diagnostics are cut first.
const MaxInput = 64 << 10

// Withheld replaces text that could not be vetted.
const Withheld = "[text withheld: redaction failed]"

var (
	once sync.Once
	red  *redact.Redactor
	err0 error
)

// Logs is the sanitizer every function's logger is built with
// (coldstart.Load): Text for string attributes, Error for errors.
var Logs obs.Sanitizer = logs{}

type logs struct{}

func (logs) Text(s string) string   { return Text(s) }
func (logs) Error(err error) string { return Error(err) }

func redactor() (*redact.Redactor, error) {
	once.Do(func() { red, err0 = redact.New(redact.Policy{RedactEmails: true, BareSecrets: true}) })
	return red, err0
}

// Text returns s fit to store or log.
func Text(s string) string {
	if s == "" {
		return ""
	}
	if len(s) > MaxInput {
		s = s[:MaxInput] + "…[truncated]"
	}
	s = obs.DefaultMasker.String(s)
	r, err := redactor()
	if err != nil {
		return Withheld
	}
	out, _, err := r.Redact(s)
	if err != nil {
		return Withheld
	}
	return out
}

// Error returns err's text fit to store or log (About err's own text).
func Error(err error) string {
	if err == nil {
		return ""
	}
	return About(err, err.Error())
}

// About returns s, text about err (a dump, a stack), fit to store or log:
// the reply text of err's chain replaced by its codes, then Text.
func About(err error, s string) string {
	for _, r := range replies(err, nil) {
		s = strings.ReplaceAll(s, r[0], r[1])
	}
	return Text(s)
}

// smtpReplier is go-mail's SendError, by its methods so others do not link go-mail.
type smtpReplier interface {
	error
	ErrorCode() int
	EnhancedStatusCode() string
}

var enhancedRe = regexp.MustCompile(`^[245]\.[0-9]{1,3}\.[0-9]{1,3}\b`)

// replies collects (reply text, summary) pairs from err's tree.
func replies(err error, out [][2]string) [][2]string {
	if err == nil {
		return out
	}
	var tp *textproto.Error
	switch e := err.(type) {
	case *textproto.Error:
		tp = e
	case smtpReplier:
		if code := e.ErrorCode(); code != 0 {
			text := e.Error()
			// go-mail's text starts with the failed step ("sending SMTP RCPT TO command"), safe.
			step, _, _ := strings.Cut(text, ":")
			return append(out, [2]string{text, strings.TrimSpace(fmt.Sprintf("%s: SMTP %d %s [reply text withheld]", step, code, e.EnhancedStatusCode()))})
		}
	}
	if tp != nil {
		sum := fmt.Sprintf("SMTP %03d", tp.Code)
		if enh := enhancedRe.FindString(tp.Msg); enh != "" {
			sum += " " + enh
		}
		return append(out, [2]string{tp.Error(), sum + " [reply text withheld]"})
	}
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		out = replies(u.Unwrap(), out)
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			out = replies(e, out)
		}
	}
	return out
}
