package p4

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/criticizer/criticizer/shared/depot"
	"github.com/criticizer/criticizer/shared/failure"
)

// Defaults for the zero values of Config.
const (
	DefaultTimeout   = 60 * time.Second
	DefaultMaxOutput = 32 << 20 // bytes of stdout per command
)

const maxStderr = 64 << 10 // kept of stderr; only a sanitized prefix is reported

// Config says how to run p4. Only Path, Port and User are required.
type Config struct {
	Path     string // absolute path of the p4 executable, e.g. /opt/bin/p4 from the Lambda layer
	Port     string // P4PORT
	User     string // P4USER
	Client   string // P4CLIENT, optional
	Tickets  string // P4TICKETS: path of the tickets file, optional
	Password string // P4PASSWD: password or ticket, optional; never logged (prefer SetCredentials)
	Home     string // HOME for the child; default os.TempDir()
	TmpDir   string // TMPDIR for the child; default os.TempDir()
	Charset  string // P4CHARSET, for a unicode-mode server or faithful non-UTF-8 text; optional
	// Trust is the P4TRUST file; TrustFingerprint, when set, is installed
	// into it ("p4 trust -i") before the first command (ssl: P4PORT).
	Trust            string
	TrustFingerprint string

	Timeout   time.Duration // per command; default DefaultTimeout
	MaxOutput int64         // stdout cap per command; default DefaultMaxOutput
}

// Runner runs p4 commands. It is safe for concurrent use.
type Runner struct {
	path             string
	env              []string
	dir              string
	timeout          time.Duration
	maxOutput        int64
	trustFingerprint string
	log              *slog.Logger

	auth struct {
		mu         sync.Mutex
		src        CredentialSource
		env        []string // P4PASSWD=<ticket> for a ticket credential
		ready      bool     // a session is established
		gen        int      // incremented by each login
		hostLocked bool     // the server refused "login -a"
		trusted    bool     // the fingerprint is installed
	}
	maskMu   sync.Mutex
	password string // masked out of every message
}

// NewRunner validates cfg; an invalid configuration is an InternalBug.
func NewRunner(cfg Config, log *slog.Logger) (*Runner, error) {
	log = cmp.Or(log, slog.New(slog.DiscardHandler))
	if cfg.Path == "" || !filepath.IsAbs(cfg.Path) || filepath.Clean(cfg.Path) != cfg.Path {
		// A fixed absolute path is rule AL-3's trusted resolver: a bare name
		// would be looked up in PATH, which an attacker may influence.
		return nil, failure.Errorf(failure.InternalBug, "p4 path %q must be a clean absolute path", cfg.Path)
	}
	st, err := os.Stat(cfg.Path)
	if err != nil {
		return nil, failure.Errorf(failure.InternalBug, "p4 executable: %w", err)
	}
	if !st.Mode().IsRegular() || st.Mode().Perm()&0o111 == 0 {
		return nil, failure.Errorf(failure.InternalBug, "p4 executable %s is not an executable file", cfg.Path)
	}
	if cfg.Port == "" || cfg.User == "" {
		return nil, failure.Errorf(failure.InternalBug, "p4 config needs Port and User")
	}
	home, tmp := cmp.Or(cfg.Home, os.TempDir()), cmp.Or(cfg.TmpDir, os.TempDir())
	vars := []struct{ name, value string }{
		{"P4PORT", cfg.Port},
		{"P4USER", cfg.User},
		{"P4CLIENT", cfg.Client},
		{"P4TICKETS", cfg.Tickets},
		{"P4PASSWD", cfg.Password},
		{"P4CHARSET", cfg.Charset},
		{"P4TRUST", cfg.Trust},
		{"HOME", home},
		{"TMPDIR", tmp},
	}
	var env []string
	for _, v := range vars {
		if v.value == "" {
			continue
		}
		if strings.ContainsAny(v.value, "\x00\n\r") {
			return nil, failure.Errorf(failure.InternalBug, "p4 config %s contains a control character", v.name)
		}
		env = append(env, v.name+"="+v.value)
	}
	if cfg.TrustFingerprint != "" {
		if err := CheckTrustFingerprint(cfg.TrustFingerprint); err != nil {
			return nil, failure.Wrap(failure.InternalBug, err)
		}
	}
	return &Runner{
		path:             cfg.Path,
		env:              env,
		dir:              home,
		password:         cfg.Password,
		timeout:          cmp.Or(max(cfg.Timeout, 0), DefaultTimeout),
		maxOutput:        cmp.Or(max(cfg.MaxOutput, 0), DefaultMaxOutput),
		trustFingerprint: cfg.TrustFingerprint,
		log:              log,
	}, nil
}

var (
	commandRe     = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)
	fingerprintRe = regexp.MustCompile(`^[0-9A-Fa-f]{2}(:[0-9A-Fa-f]{2}){15,63}$`)
)

// CheckTrustFingerprint checks fp has the shape "p4 trust -i" accepts (the stack
// checks it at synth with this same function).
func CheckTrustFingerprint(fp string) error {
	if !fingerprintRe.MatchString(fp) {
		return errors.New("p4 trust fingerprint must be 16 to 64 colon-separated hex bytes, e.g. AB:CD:…")
	}
	return nil
}

// Run executes "p4 -ztag -Mj <command> <args...>" and returns its records.
// What the arguments mean is the caller's (Fetcher passes only allow-listed
// paths); Run refuses those that cannot be meaningful tokens.
func (r *Runner) Run(ctx context.Context, command string, args ...string) ([]Record, error) {
	if !commandRe.MatchString(command) {
		return nil, failure.Errorf(failure.InternalBug, "p4: invalid command name %q", command)
	}
	for i, a := range args {
		if a == "" || strings.ContainsAny(a, "\x00\n\r") {
			return nil, failure.Errorf(failure.InternalBug, "p4 %s: argument %d is empty or contains a control character", command, i)
		}
	}
	env, gen, err := r.session(ctx)
	if err != nil {
		return nil, err
	}
	recs, err := r.exec(ctx, env, "", command, args...)
	if failure.Classify(err) == failure.AuthDenied && r.reauthenticate(ctx, gen) {
		if env, _, err = r.session(ctx); err != nil {
			return nil, err
		}
		recs, err = r.exec(ctx, env, "", command, args...)
	}
	return recs, err
}

// exec runs one p4 process with extraEnv and stdin (login's password).
func (r *Runner) exec(ctx context.Context, extraEnv []string, stdin, command string, args ...string) ([]Record, error) {
	argv := append([]string{"-ztag", "-Mj", command}, args...)
	runCtx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	cmd := exec.CommandContext(runCtx, r.path, argv...)
	cmd.Env = append(slices.Clip(r.env), extraEnv...)
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	cmd.Dir = r.dir
	// After the kill, do not wait forever for a grandchild holding the pipes.
	cmd.WaitDelay = 2 * time.Second
	stdout := &capWriter{limit: r.maxOutput, onOverflow: cancel}
	stderr := &capWriter{limit: maxStderr}
	cmd.Stdout, cmd.Stderr = stdout, stderr

	start := time.Now()
	runErr := cmd.Run()
	elapsed := time.Since(start)
	exitCode := -1
	if cmd.ProcessState != nil {
		exitCode = cmd.ProcessState.ExitCode()
	}

	recs, err := r.outcome(ctx, runCtx, command, runErr, exitCode, stdout, stderr)
	attrs := []any{
		"command", command,
		"arg_count", len(args),
		"args", loggableArgs(args[:min(len(args), maxLoggedArgs)]),
		"duration_ms", elapsed.Milliseconds(),
		"exit_code", exitCode,
		"stdout_bytes", stdout.buf.Len(),
	}
	if err != nil {
		r.log.Warn("p4 command failed", append(attrs, "error_class", string(failure.Classify(err)))...)
		return nil, err
	}
	r.log.Info("p4 command", append(attrs, "records", len(recs))...)
	return recs, nil
}

// outcome turns the finished process into records or a classified error.
func (r *Runner) outcome(ctx, runCtx context.Context, command string, runErr error, exitCode int, stdout, stderr *capWriter) ([]Record, error) {
	switch {
	case stdout.overflow:
		return nil, failure.Errorf(failure.PolicyRejected, "p4 %s: output exceeds %d bytes", command, r.maxOutput)
	case ctx.Err() != nil:
		// The caller gave up (e.g. a lost lease); errors.Is(err, ctx.Err()) holds.
		return nil, failure.Wrap(failure.NetworkTimeout, fmt.Errorf("p4 %s: %w", command, ctx.Err()))
	case errors.Is(runCtx.Err(), context.DeadlineExceeded):
		return nil, failure.Wrap(failure.NetworkTimeout, fmt.Errorf("p4 %s: timed out after %s: %w", command, r.timeout, context.DeadlineExceeded))
	}
	if _, exited := errors.AsType[*exec.ExitError](runErr); runErr != nil && !exited {
		// The client could not be started at all: the install is broken.
		return nil, failure.Errorf(failure.InternalBug, "p4 %s: %w", command, runErr)
	}

	out := stdout.buf.Bytes()
	if clientSide[command] {
		out = jsonLines(out)
	}
	recs, msgs, parseErr := parseRecords(out)
	stderrText := strings.TrimSpace(stderr.buf.String())
	var texts []string
	generic := 0
	for _, m := range msgs {
		texts = append(texts, m.text)
		generic = cmp.Or(generic, m.generic)
	}
	if stderrText != "" {
		texts = append(texts, stderrText) // client-side failures never reach the JSON layer
	}
	// A warning (no such file, protected namespace, not in client view)
	// exits 0 but means the answer is incomplete.
	if exitCode != 0 || len(texts) > 0 {
		raw := strings.Join(texts, "\n")
		class := classify(raw, exitCode, generic)
		r.maskMu.Lock()
		password := r.password
		r.maskMu.Unlock()
		msg := cmp.Or(sanitize(raw, password), "no message")
		if class == failure.SecurityFailure {
			r.log.Error("the p4 server's key differs from the pinned fingerprint: possible interception; the client refused the connection",
				"event", "p4_trust_mismatch", "security_event", true, "command", command)
		}
		if class == failure.PolicyRejected {
			r.log.Warn("p4 refused a protected path", "event", "p4_protected_namespace",
				"command", command, "exit_code", exitCode)
		}
		return nil, failure.Errorf(class, "p4 %s: exit status %d: %s", command, exitCode, msg)
	}
	if parseErr != nil {
		return nil, failure.Wrap(failure.SchemaInvalid, fmt.Errorf("p4 %s: %w", command, parseErr))
	}
	return recs, nil
}

// clientSide commands may print plain text (login's "Enter password:")
// among the JSON lines.
var clientSide = map[string]bool{"login": true, "trust": true}

// jsonLines keeps only JSON object lines: every -Mj record is one line.
func jsonLines(out []byte) []byte {
	var keep []byte
	for line := range bytes.Lines(out) {
		if bytes.HasPrefix(line, []byte("{")) {
			keep = append(keep, line...)
		}
	}
	return keep
}

// capWriter keeps at most limit bytes; past it, it calls onOverflow (the
// kill) and discards the rest, so the child never blocks on a full pipe.
type capWriter struct {
	buf        bytes.Buffer
	limit      int64
	overflow   bool
	onOverflow func()
}

func (w *capWriter) Write(p []byte) (int, error) {
	if w.overflow {
		return len(p), nil
	}
	if room := w.limit - int64(w.buf.Len()); int64(len(p)) > room {
		w.buf.Write(p[:max(room, 0)])
		w.overflow = true
		if w.onOverflow != nil {
			w.onOverflow()
		}
		return len(p), nil
	}
	w.buf.Write(p)
	return len(p), nil
}

// maxLoggedArgs bounds the arguments logged (a batched print names hundreds).
const maxLoggedArgs = 8

var (
	flagArgRe  = regexp.MustCompile(`^-[A-Za-z]{1,3}[0-9]*$`)
	numberRe   = regexp.MustCompile(`^[0-9]{1,19}$`)
	revisionRe = regexp.MustCompile(`(#[0-9]+|#head|#none|@=[0-9]+|@[0-9]+)$`)
)

// loggableArgs shows flags, numbers and valid depot specs; anything else
// (user names, free text) only by its length.
func loggableArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		path := revisionRe.ReplaceAllString(a, "")
		out[i] = a
		if !flagArgRe.MatchString(a) && !numberRe.MatchString(a) && !depot.ValidSyntax(path) {
			out[i] = fmt.Sprintf("<redacted len=%d>", len(a))
		}
	}
	return out
}
