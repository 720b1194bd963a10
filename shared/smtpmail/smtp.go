package smtpmail

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net/textproto"
	"regexp"
	"strings"
	"time"

	gomail "github.com/wneessen/go-mail"
	gomailsmtp "github.com/wneessen/go-mail/smtp"

	"github.com/criticizer/criticizer/shared/delivery"
	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/notify"
)

// TLSMode is how the SMTP connection is secured.
type TLSMode string

const (
	TLSStartTLS TLSMode = "starttls" // plain connect, mandatory STARTTLS (port 587)
	TLSImplicit TLSMode = "tls"      // TLS from the first byte (port 465)
	// TLSNone sends in clear text (port 25). AUTH is then refused by the
	// client unless the server is on the loopback interface, so credentials
	// never cross a network unencrypted.
	TLSNone TLSMode = "none"
)

// DefaultTimeout is Config.Timeout when zero. go-mail has one
// timeout: it bounds dialling, and it is the connection deadline, re-armed
// after the session is set up and again before the message is sent, so the
// DATA exchange (body, final dot and the server's reply to it) must finish
// within one Timeout. RFC 5321 lets a server take 10 minutes to answer the
// final dot; we do not wait that long — a reply that does not come in time
// is an uncertain send (delivery.ErrOutcomeUnknown), settled before any resend.
//
// The relations, stated once (docs/design.md, "E-mail delivery"):
//
//	MaxSendDuration(Timeout) = 3 × Timeout          dial; EHLO/STARTTLS/AUTH; MAIL … DATA … reply
//	MaxSendDuration(Timeout) < notify function timeout (= LEASE_SECONDS, default 60 s): 30 s by default
//	SEND_COMPLETION_WINDOW_SECONDS > MaxSendDuration + margin (SMTP default 5 min)
//
// The client also cuts Timeout to the invocation's deadline, so a send never
// outlives the function.
const DefaultTimeout = 10 * time.Second

// MaxSendDuration is the longest one send can take with the given timeout.
func MaxSendDuration(timeout time.Duration) time.Duration { return 3 * timeout }

// Config configures a Sender. Password comes from the secret source, never
// a default or a file; String, GoString and LogValue mask it, so the config
// prints safely with %v/%+v/%#v and slog.
type Config struct {
	Host string
	// Port defaults by TLS mode: 587 starttls, 465 tls, 25 none.
	Port int
	// From is the envelope sender (MAIL FROM, where bounces go). Empty
	// means the message's From.
	From     string
	TLS      TLSMode // default starttls
	Username string  // empty: no AUTH
	Password string
	Timeout  time.Duration // default DefaultTimeout
	HELO     string        // EHLO name; default the host name
	// TLSConfig overrides certificate verification, e.g. for a private CA.
	// Its ServerName defaults to Host.
	TLSConfig *tls.Config
}

const redacted = "[REDACTED]"

func (c Config) masked() Config {
	if c.Password != "" {
		c.Password = redacted
	}
	return c
}

// String formats c with the password masked.
func (c Config) String() string {
	m := c.masked()
	return fmt.Sprintf("{Host:%s Port:%d From:%s TLS:%s Username:%s Password:%s Timeout:%s HELO:%s}",
		m.Host, m.Port, m.From, m.TLS, m.Username, m.Password, m.Timeout, m.HELO)
}

// GoString formats c for %#v with the password masked.
func (c Config) GoString() string { return "smtpmail.Config" + c.String() }

// LogValue renders c for slog with the password masked.
func (c Config) LogValue() slog.Value {
	m := c.masked()
	return slog.GroupValue(
		slog.String("host", m.Host), slog.Int("port", m.Port), slog.String("tls", string(m.TLS)),
		slog.String("username", m.Username), slog.String("password", m.Password),
		slog.Duration("timeout", m.Timeout), slog.String("helo", m.HELO),
	)
}

// Sender delivers composed messages over SMTP with go-mail, one
// connection per message: the notify stage sends few messages per
// invocation, and a fresh connection cannot inherit a poisoned session.
type Sender struct {
	cfg Config
	log *slog.Logger
}

// New validates cfg and applies its defaults. A bad config is
// INTERNAL_BUG: it needs a deploy, not a retry. A nil logger means
// slog.Default().
func New(cfg Config, log *slog.Logger) (*Sender, error) {
	if strings.TrimSpace(cfg.Host) == "" {
		return nil, failure.Errorf(failure.InternalBug, "smtpmail: host is empty")
	}
	if cfg.TLS == "" {
		cfg.TLS = TLSStartTLS
	}
	if cfg.Port == 0 {
		switch cfg.TLS {
		case TLSStartTLS:
			cfg.Port = 587
		case TLSImplicit:
			cfg.Port = 465
		case TLSNone:
			cfg.Port = 25
		}
	}
	switch cfg.TLS {
	case TLSStartTLS, TLSImplicit, TLSNone:
	default:
		return nil, failure.Errorf(failure.InternalBug, "smtpmail: tls mode %q (want starttls, tls or none)", cfg.TLS)
	}
	if cfg.Port < 1 || cfg.Port > 65535 {
		return nil, failure.Errorf(failure.InternalBug, "smtpmail: port %d out of range", cfg.Port)
	}
	if cfg.Username != "" && cfg.Password == "" {
		return nil, failure.Errorf(failure.InternalBug, "smtpmail: username set without a password")
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if log == nil {
		log = slog.Default()
	}
	return &Sender{cfg: cfg, log: log.With("component", "smtpmail")}, nil
}

// Send delivers m, which must have been composed for k, and returns its
// notification id: the deterministic Message-ID. SMTP has no provider-side
// lookup, so the only id settling can search for (a mailbox, a provider's
// logs, the stand-in) is one Criticizer chose; a queue id from the 250
// reply would be lost with the reply. Errors carry a failure class and the
// reply code (failure.UpstreamCode; classifyReply's table).
func (s *Sender) Send(ctx context.Context, k delivery.Key, m *notify.Message) (string, error) {
	if m == nil || m.Key.String() != k.String() {
		return "", failure.Errorf(failure.InternalBug, "smtpmail: message was composed for another key than %s", k)
	}
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("smtpmail: send %s: %w", k, err)
	}
	gm, err := m.Mail(s.cfg.From)
	if err != nil {
		return "", err
	}
	client, err := s.client(ctx)
	if err != nil {
		return "", err
	}
	log := s.log.With("changelist", k.Changelist, "review_version", k.ReviewVersion,
		"recipient", m.To, "message_id", m.MessageID, "key", m.DeliveryToken())

	start := time.Now()
	err = client.DialAndSendWithContext(ctx, gm)
	if err != nil && gm.IsDelivered() {
		// The server answered 250 to the message; what failed is the
		// RSET/QUIT afterwards. Reporting failure would cause a resend.
		log.Warn("smtp: delivered, error after acceptance ignored", "err", err)
		err = nil
	}
	if err != nil {
		ferr := classify(k, err)
		log.Warn("smtp: send failed", "class", failure.Classify(ferr), "smtp_code", failure.UpstreamCode(ferr),
			"outcome_unknown", errors.Is(ferr, delivery.ErrOutcomeUnknown), "err", err, "duration", time.Since(start))
		return "", ferr
	}
	log.Info("smtp: sent", "duration", time.Since(start))
	return m.MessageID, nil
}

// client builds a go-mail client for one send. The timeout is cut to the
// context's deadline, because go-mail honours the context only while dialling;
// afterwards the connection deadline is what stops a hung server.
func (s *Sender) client(ctx context.Context) (*gomail.Client, error) {
	timeout := s.cfg.Timeout
	if dl, ok := ctx.Deadline(); ok {
		if left := time.Until(dl); left < timeout {
			timeout = left
		}
	}
	if timeout <= 0 {
		return nil, fmt.Errorf("smtpmail: send: %w", context.DeadlineExceeded)
	}
	tc := &tls.Config{ServerName: s.cfg.Host, MinVersion: tls.VersionTLS12}
	if s.cfg.TLSConfig != nil {
		tc = s.cfg.TLSConfig.Clone()
		if tc.ServerName == "" {
			tc.ServerName = s.cfg.Host
		}
	}
	opts := []gomail.Option{
		gomail.WithPort(s.cfg.Port),
		gomail.WithTimeout(timeout),
		gomail.WithTLSConfig(tc),
	}
	switch s.cfg.TLS {
	case TLSStartTLS:
		opts = append(opts, gomail.WithTLSPolicy(gomail.TLSMandatory))
	case TLSImplicit:
		opts = append(opts, gomail.WithSSL())
	case TLSNone:
		opts = append(opts, gomail.WithTLSPolicy(gomail.NoTLS))
	}
	if s.cfg.HELO != "" {
		opts = append(opts, gomail.WithHELO(s.cfg.HELO))
	}
	if s.cfg.Username != "" {
		// Over TLS let go-mail pick the strongest mechanism offered. In
		// clear text only PLAIN, which go-mail allows to loopback only.
		auth := gomail.SMTPAuthAutoDiscover
		if s.cfg.TLS == TLSNone {
			auth = gomail.SMTPAuthPlain
		}
		opts = append(opts, gomail.WithSMTPAuth(auth), gomail.WithUsername(s.cfg.Username), gomail.WithPassword(s.cfg.Password))
	}
	c, err := gomail.NewClient(s.cfg.Host, opts...)
	if err != nil {
		return nil, failure.Errorf(failure.InternalBug, "smtpmail: client: %w", err)
	}
	return c, nil
}

// classify wraps a go-mail error with its failure class and SMTP code.
func classify(k delivery.Key, err error) error {
	wrapped := fmt.Errorf("smtpmail: send %s: %w", k, err)
	var se *gomail.SendError
	if errors.As(err, &se) {
		if code := se.ErrorCode(); code != 0 {
			enh := enhancedCode(se.EnhancedStatusCode())
			return &failure.Error{Class: classifyReply(code, enh), UpstreamCode: code, UpstreamStatus: enh, Err: wrapped}
		}
		switch se.Reason {
		case gomail.ErrGetSender, gomail.ErrGetRcpts, gomail.ErrNoUnencoded:
			return failure.Wrap(failure.InternalBug, wrapped)
		case gomail.ErrSMTPDataClose:
			// The body and its final "." were written; only the reply was
			// lost (go-mail flattens the cause into text: the stage tells more).
			return failure.Wrap(failure.NetworkTimeout, fmt.Errorf("%w: %w", delivery.ErrOutcomeUnknown, wrapped))
		}
		// No reply code and no local cause: the connection broke mid
		// conversation (go-mail does not keep the net error in the chain).
		return failure.Wrap(failure.NetworkTimeout, wrapped)
	}
	var te *textproto.Error
	if errors.As(err, &te) {
		enh := enhancedCode(te.Msg)
		return &failure.Error{Class: classifyReply(te.Code, enh), UpstreamCode: te.Code, UpstreamStatus: enh, Err: wrapped}
	}
	for _, authErr := range []error{
		gomail.ErrPlainAuthNotSupported, gomail.ErrLoginAuthNotSupported, gomail.ErrNoSupportedAuthDiscovered,
		gomail.ErrCramMD5AuthNotSupported, gomail.ErrSCRAMSHA256AuthNotSupported, gomail.ErrSCRAMSHA1AuthNotSupported,
		gomailsmtp.ErrUnencrypted, gomailsmtp.ErrWrongHostname,
	} {
		if errors.Is(err, authErr) {
			return failure.Wrap(failure.AuthDenied, wrapped)
		}
	}
	// Dial and socket errors (refused, reset, timeout, DNS) are classified
	// by the shared rules; anything else, such as a certificate that does
	// not verify, is configuration and lands in INTERNAL_BUG.
	return failure.Wrap(failure.Classify(err), wrapped)
}

// classifyReply maps an SMTP reply code (and RFC 3463 enhanced code, when the
// server sent one) onto the failure classes:
//
//	4xx (421, 450, 451, 452, 454, ...)  UPSTREAM_5XX    transient by SMTP's own definition;
//	                                                    the closest retryable class is "the
//	                                                    upstream failed internally"
//	530, 534, 535, 538; 523              AUTH_DENIED     credentials or auth policy
//	550, 551, 553 with 5.7.x            POLICY_REJECTED relay denied, spam, sender policy
//	550, 551, 553 otherwise             NOT_FOUND       mailbox/recipient rejected, permanent
//	552                                 POLICY_REJECTED message size / storage limit
//	554 and other 5xx                   POLICY_REJECTED transaction refused
//	500-504, 555                        SCHEMA_INVALID  the server refused our command syntax
//	anything else                       INTERNAL_BUG    not an error reply: protocol confusion
func classifyReply(code int, enhanced string) failure.Class {
	switch {
	case code >= 400 && code < 500:
		return failure.Upstream5xx
	case code == 523 || code == 530 || code == 534 || code == 535 || code == 538:
		return failure.AuthDenied
	case code == 550 || code == 551 || code == 553:
		if strings.HasPrefix(enhanced, "5.7.") {
			return failure.PolicyRejected
		}
		return failure.NotFound
	case code >= 500 && code <= 504 || code == 555:
		return failure.SchemaInvalid
	case code >= 500 && code < 600:
		return failure.PolicyRejected
	}
	return failure.InternalBug
}

var enhancedRe = regexp.MustCompile(`^[245]\.\d{1,3}\.\d{1,3}\b`)

// enhancedCode extracts the RFC 3463 code that starts a reply text; nothing
// else of the text survives (it is untrusted and may echo what it was sent).
func enhancedCode(msg string) string { return enhancedRe.FindString(strings.TrimSpace(msg)) }
