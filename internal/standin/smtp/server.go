// Package smtp owns the SMTP stand-in: a real SMTP server on the loopback
// interface, built on github.com/emersion/go-smtp, that accepts mail like a
// provider would, keeps every accepted message in memory and injects faults on
// demand. Tests and cmd/devstack run it in-process; the functions, out of
// process, read it through its HTTP control API.
package smtp

import (
	"bytes"
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"mime"
	"net"
	"net/http"
	"net/mail"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/emersion/go-sasl"
	gosmtp "github.com/emersion/go-smtp"
)

// Options configures a Server. The zero value is an open relay on a random
// loopback port without the HTTP API.
type Options struct {
	Port int // on 127.0.0.1; 0 picks a free one
	// Username, when set, makes AUTH PLAIN with Username and Password
	// mandatory before MAIL (from the test or the environment, never source).
	Username, Password string
	Control            bool // serve the HTTP control API on 127.0.0.1:ControlPort (0: any)
	ControlPort        int
	TLSConfig          *tls.Config  // enables STARTTLS
	Logger             *slog.Logger // default slog.Default()
}

// Message is one accepted message.
type Message struct {
	Seq        int         `json:"seq"`
	From       string      `json:"from"` // envelope MAIL FROM
	To         []string    `json:"to"`   // envelope RCPT TO
	Username   string      `json:"username,omitempty"`
	MessageID  string      `json:"message_id"`
	Subject    string      `json:"subject"`
	Header     mail.Header `json:"header"`
	Raw        []byte      `json:"-"`
	ReceivedAt time.Time   `json:"received_at"`
}

// Stage is the point of the SMTP conversation a Fault applies to.
type Stage string

const (
	StageAuth Stage = "auth"
	StageMail Stage = "mail"
	StageRcpt Stage = "rcpt"
	StageData Stage = "data" // the reply to the final dot, which decides acceptance
)

// Fault is an injected failure, consumed in queue order by the next Count
// commands of its Stage.
type Fault struct {
	Stage    Stage  `json:"stage"`
	Code     int    `json:"code,omitempty"`     // the reply, e.g. 451; 0 answers normally (after Delay)
	Enhanced string `json:"enhanced,omitempty"` // RFC 3463, e.g. "5.1.1"; default "<class>.0.0"
	Message  string `json:"message,omitempty"`
	Count    int    `json:"count,omitempty"` // commands hit: 0 means 1, negative until Reset
	// Delay is waited before answering. At StageData with Code 0 it is the
	// stalled reply to the final dot: the message is accepted after Delay,
	// also if the client gave up (RFC 5321 §4.5.3.2.6 gives a server 10
	// minutes there), and not found by Message-ID before; Held counts them.
	Delay time.Duration `json:"delay,omitempty"`
	// Drop closes the connection instead of replying; at StageData after
	// storing the message: the "send may have happened" case.
	Drop bool `json:"drop,omitempty"`
}

// Server is the stand-in. It is safe for concurrent use.
type Server struct {
	opts Options
	log  *slog.Logger
	smtp *gosmtp.Server
	http *http.Server

	addr, controlAddr string
	done              chan struct{}

	mu      sync.Mutex
	msgs    []Message
	seq     int
	faults  []Fault
	arrived chan struct{} // closed and replaced whenever a message is stored
	held    int           // DATA transactions held by a fault's delay
	served  map[Stage]int // fault hits served, per stage
}

// NewServer returns a server configured by opts; Start runs it.
func NewServer(opts Options) *Server {
	return &Server{opts: opts, log: cmp.Or(opts.Logger, slog.Default()).With("component", "smtp-standin"), arrived: make(chan struct{}), done: make(chan struct{}), served: map[Stage]int{}}
}

// Start listens on 127.0.0.1 and serves in the background. It returns the
// SMTP address ("127.0.0.1:port").
func (s *Server) Start() (addr string, err error) {
	// Loopback only, so AllowInsecureAuth never sends credentials off the machine.
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(s.opts.Port)))
	if err != nil {
		return "", fmt.Errorf("smtp standin: listen: %w", err)
	}
	srv := gosmtp.NewServer(gosmtp.BackendFunc(func(c *gosmtp.Conn) (gosmtp.Session, error) { return &session{srv: s, conn: c}, nil }))
	// ErrorLog: go-smtp's diagnostics, as warnings.
	srv.Domain, srv.AllowInsecureAuth, srv.TLSConfig, srv.ErrorLog = "smtp.standin.local", true, s.opts.TLSConfig, slog.NewLogLogger(s.log.Handler(), slog.LevelWarn)
	srv.MaxMessageBytes, srv.MaxRecipients, srv.ReadTimeout, srv.WriteTimeout = 10<<20, 100, time.Minute, time.Minute
	s.smtp = srv
	s.addr = ln.Addr().String()

	if s.opts.Control {
		cl, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(s.opts.ControlPort)))
		if err != nil {
			ln.Close()
			return "", fmt.Errorf("smtp standin: control listen: %w", err)
		}
		s.controlAddr = cl.Addr().String()
		s.http = &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second}
		go func() {
			if err := s.http.Serve(cl); err != nil && !errors.Is(err, http.ErrServerClosed) {
				s.log.Error("control api stopped", "err", err)
			}
		}()
	}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, gosmtp.ErrServerClosed) {
			s.log.Error("smtp server stopped", "err", err)
		}
	}()
	s.log.Info("smtp standin listening", "smtp", s.addr, "control", s.controlAddr, "auth", s.opts.Username != "")
	return s.addr, nil
}

// Addr is the SMTP address, empty before Start.
func (s *Server) Addr() string { return s.addr }

// ControlAddr is the HTTP control API address, empty when it is disabled.
func (s *Server) ControlAddr() string { return s.controlAddr }

// Close stops both listeners and drops open connections; faults waiting on a
// Delay return at once.
func (s *Server) Close() {
	select {
	case <-s.done:
		return
	default:
		close(s.done)
	}
	if s.smtp != nil {
		s.smtp.Close()
	}
	if s.http != nil {
		s.http.Close()
	}
}

// Messages returns a copy of the accepted messages, oldest first.
func (s *Server) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.msgs)
}

// WaitFor blocks until at least n messages have been accepted since the last
// Reset, or ctx ends.
func (s *Server) WaitFor(ctx context.Context, n int) error {
	for {
		s.mu.Lock()
		got, ch := len(s.msgs), s.arrived
		s.mu.Unlock()
		if got >= n {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("smtp standin: %d of %d messages: %w", got, n, ctx.Err())
		}
	}
}

// Reset forgets every message and pending fault.
func (s *Server) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.msgs, s.faults = nil, nil
	close(s.arrived)
	s.arrived = make(chan struct{})
}

// QueueFault appends f to the fault queue.
func (s *Server) QueueFault(f Fault) error {
	if err := validateFault(f); err != nil {
		return err
	}
	f.Count = cmp.Or(f.Count, 1)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, f)
	return nil
}

func validateFault(f Fault) error {
	if !slices.Contains([]Stage{StageAuth, StageMail, StageRcpt, StageData}, f.Stage) {
		return fmt.Errorf("smtp standin: unknown fault stage %q (want auth, mail, rcpt or data)", f.Stage)
	}
	if f.Code != 0 && (f.Code < 400 || f.Code > 599) {
		return fmt.Errorf("smtp standin: fault code %d is not a 4xx or 5xx reply", f.Code)
	}
	if f.Delay < 0 {
		return fmt.Errorf("smtp standin: negative fault delay %v", f.Delay)
	}
	return nil
}

// Held is the number of DATA transactions held by a fault's delay.
func (s *Server) Held() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.held
}

// Served is the fault hits served per stage since Start (Reset keeps them).
func (s *Server) Served() map[Stage]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.served)
}

func (s *Server) hold(d int) {
	s.mu.Lock()
	s.held += d
	s.mu.Unlock()
}

// Faults returns the pending faults.
func (s *Server) Faults() []Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Fault(nil), s.faults...)
}

// takeFault consumes one hit of the first fault queued for stage.
func (s *Server) takeFault(stage Stage) (Fault, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, f := range s.faults {
		if f.Stage != stage {
			continue
		}
		s.served[stage]++
		if f.Count > 0 {
			s.faults[i].Count--
			if s.faults[i].Count == 0 {
				s.faults = append(s.faults[:i], s.faults[i+1:]...)
			}
		}
		return f, true
	}
	return Fault{}, false
}

// apply waits out the fault's delay and turns it into a reply error, or a
// drop: the caller closes the connection instead of replying.
func (s *Server) apply(f Fault) (drop bool, err error) {
	select {
	case <-time.After(f.Delay): // at once for none
	case <-s.done:
	}
	if f.Drop || f.Code == 0 {
		return f.Drop, nil
	}
	return false, f.smtpError()
}

func (f Fault) smtpError() *gosmtp.SMTPError {
	ec := gosmtp.EnhancedCode{f.Code / 100, 0, 0}
	if f.Enhanced != "" {
		var a, b, c int
		if n, _ := fmt.Sscanf(f.Enhanced, "%d.%d.%d", &a, &b, &c); n == 3 {
			ec = gosmtp.EnhancedCode{a, b, c}
		}
	}
	return &gosmtp.SMTPError{Code: f.Code, EnhancedCode: ec, Message: cmp.Or(f.Message, "injected fault")}
}

func (s *Server) store(from string, to []string, user string, raw []byte) Message {
	m := Message{From: from, To: to, Username: user, Raw: raw, ReceivedAt: time.Now().UTC()}
	if parsed, err := mail.ReadMessage(bytes.NewReader(raw)); err == nil {
		m.Header = parsed.Header
		m.MessageID = parsed.Header.Get("Message-Id")
		m.Subject = parsed.Header.Get("Subject")
		if dec, err := new(mime.WordDecoder).DecodeHeader(m.Subject); err == nil {
			m.Subject = dec
		}
	}
	s.mu.Lock()
	s.seq++
	m.Seq = s.seq
	s.msgs = append(s.msgs, m)
	close(s.arrived)
	s.arrived = make(chan struct{})
	s.mu.Unlock()
	// Not the body: tests put secrets in it to prove they do not leak.
	s.log.Info("message accepted", "seq", m.Seq, "message_id", m.MessageID, "rcpt_count", len(to), "bytes", len(raw))
	return m
}

// session is one SMTP connection's transaction state.
type session struct {
	srv  *Server
	conn *gosmtp.Conn
	user string
	auth bool
	from string
	to   []string
}

var _ gosmtp.AuthSession = (*session)(nil)

func (ss *session) AuthMechanisms() []string { return []string{sasl.Plain} }

func (ss *session) Auth(mech string) (sasl.Server, error) {
	if mech != sasl.Plain {
		return nil, gosmtp.ErrAuthUnknownMechanism
	}
	return sasl.NewPlainServer(func(identity, username, password string) error {
		if err := ss.fault(StageAuth); err != nil {
			return err
		}
		if identity != "" && identity != username {
			return gosmtp.ErrAuthFailed
		}
		o := ss.srv.opts
		if o.Username != "" && (username != o.Username || password != o.Password) {
			return gosmtp.ErrAuthFailed
		}
		ss.user, ss.auth = username, true
		return nil
	}), nil
}

func (ss *session) Mail(from string, _ *gosmtp.MailOptions) error {
	if ss.srv.opts.Username != "" && !ss.auth {
		return &gosmtp.SMTPError{Code: 530, EnhancedCode: gosmtp.EnhancedCode{5, 7, 0}, Message: "Authentication required"}
	}
	if err := ss.fault(StageMail); err != nil {
		return err
	}
	ss.from = from
	return nil
}

func (ss *session) Rcpt(to string, _ *gosmtp.RcptOptions) error {
	if err := ss.fault(StageRcpt); err != nil {
		return err
	}
	ss.to = append(ss.to, to)
	return nil
}

func (ss *session) Data(r io.Reader) error {
	raw, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	drop := false
	if f, ok := ss.srv.takeFault(StageData); ok {
		ss.srv.hold(1)
		drop, err = ss.srv.apply(f)
		ss.srv.hold(-1)
		if err != nil {
			return err
		}
	}
	ss.srv.store(ss.from, slices.Clone(ss.to), ss.user, raw)
	if drop {
		ss.drop() // stored first: the provider accepted it, the client cannot know
	}
	return nil
}

// fault applies the next fault of stage, closing the connection for a drop.
func (ss *session) fault(stage Stage) error {
	f, ok := ss.srv.takeFault(stage)
	if !ok {
		return nil
	}
	drop, err := ss.srv.apply(f)
	if drop {
		ss.drop()
		return errors.New("connection dropped")
	}
	return err
}

// drop closes the socket under go-smtp: the pending reply is never written.
func (ss *session) drop() { _ = ss.conn.Conn().Close() }

func (ss *session) Reset()        { ss.from, ss.to = "", nil }
func (ss *session) Logout() error { return nil }
