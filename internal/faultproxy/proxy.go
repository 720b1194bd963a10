// Package faultproxy is a fault-injecting HTTP proxy for the AWS APIs the
// functions call: the local emulator hands its AWS_ENDPOINT_URL to every
// function it starts, so pointing it here puts every DynamoDB, SQS, S3 and
// Secrets Manager call through the proxy. Requests are forwarded unchanged
// unless a Plan injects a fault: a lost answer (applied, never answered), a
// reset before forwarding, a throttling error shaped as AWS sends it, a
// delay, or the death of the calling process. Decisions depend only on the
// seed, the request's job (by its registered tokens), kind and ordinal, so a
// plan is as reproducible as the functions' request sequence.
package faultproxy

import (
	"bytes"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Kind is a kind of injected fault.
type Kind string

const (
	// Delay holds the request for a while, then forwards it.
	Delay Kind = "delay"
	// ResetBefore resets the connection without forwarding: nothing applied.
	ResetBefore Kind = "reset-before"
	// LostAnswer forwards the request (applied), then resets instead of answering.
	LostAnswer Kind = "lost-answer"
	// LostAnswer5xx forwards the request, then answers the service's 500.
	LostAnswer5xx Kind = "lost-answer-5xx"
	// Throttle answers the service's throttling error without forwarding.
	Throttle Kind = "throttle"
	// Kill SIGKILLs the function process that sent the request (found by its
	// socket), then forwards it: the write may apply, its worker is gone.
	Kill Kind = "kill"
)

// Kinds lists every fault kind, in report order.
var Kinds = []Kind{Delay, ResetBefore, LostAnswer, LostAnswer5xx, Throttle, Kill}

// Op is an AWS request's service and action: "dynamodb.UpdateItem", "s3.PUT".
type Op string

// Classify names a request's operation from its X-Amz-Target header (the
// JSON protocols) or, for S3's REST protocol, its method.
func Classify(r *http.Request) Op {
	if t := r.Header.Get("X-Amz-Target"); t != "" {
		prefix, action, ok := strings.Cut(t, ".")
		if !ok {
			return Op("unknown." + t)
		}
		svc := strings.ToLower(prefix)
		switch {
		case strings.HasPrefix(prefix, "DynamoDB_"):
			svc = "dynamodb"
		case prefix == "AmazonSQS":
			svc = "sqs"
		}
		return Op(svc + "." + action)
	}
	if r.URL.Query().Has("Action") || strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
		return Op("query." + r.URL.Query().Get("Action"))
	}
	return Op("s3." + r.Method)
}

// Service is the service part of an Op.
func (o Op) Service() string { s, _, _ := strings.Cut(string(o), "."); return s }

// Fault is one decision: what to do to a request.
type Fault struct {
	Kind  Kind
	Delay time.Duration // for Delay (and the hold before the other kinds, if set)
}

// Decider decides the fault for the n-th request (1-based) of op of the
// registered job with that ordinal; ok=false forwards it unchanged.
type Decider interface {
	Decide(job int, op Op, n int, body []byte) (Fault, bool)
}

// Event records one injected fault.
type Event struct {
	At   time.Time
	Job  int // the registered job's ordinal; -1 for none
	Op   Op
	N    int
	Kind Kind
	Note string // e.g. the killed pid, or why a kill found no process
}

// Proxy is the fault proxy: New, Start, then SetUpstream once the emulator
// is up. It is safe for concurrent use.
type Proxy struct {
	// Answered, when set (before Start), is given every forwarded request
	// and its answer's status and body before the caller gets them.
	Answered func(r *http.Request, status int, body []byte)

	srv      *http.Server
	ln       net.Listener
	client   *http.Client
	killPeer func(remote string) (string, error)

	mu       sync.Mutex
	upstream *url.URL
	decider  Decider
	tokens   map[string]int // token → job ordinal
	counts   map[string]int // "<job>|<op>" → requests seen
	events   []Event
}

// New returns a stopped proxy that forwards everything (no Decider).
func New() *Proxy {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 64
	tr.Proxy = nil
	return &Proxy{
		client:   &http.Client{Transport: tr, Timeout: 5 * time.Minute},
		tokens:   map[string]int{},
		counts:   map[string]int{},
		killPeer: KillBootstrapPeer,
	}
}

// Start listens on a free loopback port and serves in the background.
func (p *Proxy) Start() error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("faultproxy: listen: %w", err)
	}
	p.ln = ln
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: 30 * time.Second}
	go func() { _ = p.srv.Serve(ln) }()
	return nil
}

// URL is the proxy's endpoint (http://127.0.0.1:<port>).
func (p *Proxy) URL() string { return "http://" + p.ln.Addr().String() }

// Close stops the proxy.
func (p *Proxy) Close() error {
	if p.srv == nil {
		return nil
	}
	return p.srv.Close()
}

// SetUpstream names the endpoint requests are forwarded to.
func (p *Proxy) SetUpstream(endpoint string) error {
	u, err := url.Parse(endpoint)
	if err != nil {
		return fmt.Errorf("faultproxy: upstream: %w", err)
	}
	p.mu.Lock()
	p.upstream = u
	p.mu.Unlock()
	return nil
}

// SetDecider installs d (nil: forward everything) and forgets the jobs and
// counts, not the events.
func (p *Proxy) SetDecider(d Decider) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.decider = d
	p.tokens, p.counts = map[string]int{}, map[string]int{}
}

// Register ties requests whose body or path holds any of tokens (a job id,
// an outbox key prefix) to job.
func (p *Proxy) Register(job int, tokens ...string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, t := range tokens {
		if t != "" {
			p.tokens[t] = job
		}
	}
}

// Events returns the faults injected so far.
func (p *Proxy) Events() []Event {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Event(nil), p.events...)
}

// Counts returns the injected faults per kind and per job among events.
func Counts(events []Event) (byKind map[Kind]int, byJob map[int]int) {
	byKind, byJob = map[Kind]int{}, map[int]int{}
	for _, e := range events {
		byKind[e.Kind]++
		byJob[e.Job]++
	}
	return byKind, byJob
}

// Format renders per-kind counts in Kinds order, e.g. "delay=3 throttle=1".
func Format(byKind map[Kind]int) string {
	var parts []string
	for _, k := range Kinds {
		parts = append(parts, fmt.Sprintf("%s=%d", k, byKind[k]))
	}
	return strings.Join(parts, " ")
}

// match finds a request's job: the longest registered token in its path or body.
func (p *Proxy) match(path string, body []byte) int {
	job, best := -1, 0
	for t, j := range p.tokens {
		if len(t) > best && (strings.Contains(path, t) || bytes.Contains(body, []byte(t))) {
			job, best = j, len(t)
		}
	}
	return job
}

// ServeHTTP forwards one request, applying the decided fault.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, "faultproxy: read body: "+err.Error(), http.StatusBadGateway)
		return
	}
	op := Classify(r)
	p.mu.Lock()
	up, d := p.upstream, p.decider
	f, inject, job, n := Fault{}, false, -1, 0
	if d != nil {
		if job = p.match(r.URL.EscapedPath(), body); job >= 0 {
			key := fmt.Sprintf("%d|%s", job, op)
			p.counts[key]++
			n = p.counts[key]
			f, inject = d.Decide(job, op, n, body)
		}
	}
	p.mu.Unlock()
	if up == nil {
		http.Error(w, "faultproxy: no upstream yet", http.StatusBadGateway)
		return
	}
	if !inject {
		p.forward(w, r, up, body)
		return
	}
	ev := Event{At: time.Now(), Job: job, Op: op, N: n, Kind: f.Kind}
	time.Sleep(f.Delay) // 0: none
	switch f.Kind {
	case ResetBefore:
		p.record(ev)
		Reset(w)
	case Throttle:
		p.record(ev)
		writeAWSError(w, throttles, op)
	case LostAnswer, LostAnswer5xx:
		resp, err := p.send(r, up, body)
		if err != nil {
			http.Error(w, "faultproxy: upstream: "+err.Error(), http.StatusBadGateway)
			return
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		ev.Note = fmt.Sprintf("upstream answered %d", resp.StatusCode)
		p.record(ev)
		if f.Kind == LostAnswer {
			Reset(w)
		} else {
			writeAWSError(w, internalErrors, op)
		}
	case Delay, Kill:
		if f.Kind == Kill {
			if pid, err := p.killPeer(r.RemoteAddr); err != nil {
				ev.Note = "no process killed: " + err.Error()
			} else {
				ev.Note = "killed pid " + pid
			}
		}
		p.record(ev)
		// Forwarded, after a kill too: a write sent before the death may still apply.
		p.forward(w, r, up, body)
	default:
		p.forward(w, r, up, body)
	}
}

func (p *Proxy) record(ev Event) {
	p.mu.Lock()
	p.events = append(p.events, ev)
	p.mu.Unlock()
}

func (p *Proxy) send(r *http.Request, up *url.URL, body []byte) (*http.Response, error) {
	u := *up
	u.Path, u.RawPath, u.RawQuery = r.URL.Path, r.URL.RawPath, r.URL.RawQuery
	out, err := http.NewRequestWithContext(r.Context(), r.Method, u.String(), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	out.Header = r.Header.Clone()
	out.Host = r.Host // the signature covers the host the function signed for
	out.ContentLength = int64(len(body))
	return p.client.Do(out)
}

func (p *Proxy) forward(w http.ResponseWriter, r *http.Request, up *url.URL, body []byte) {
	resp, err := p.send(r, up, body)
	if err != nil {
		http.Error(w, "faultproxy: upstream: "+err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	answer := io.Reader(resp.Body)
	if p.Answered != nil {
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			http.Error(w, "faultproxy: upstream: "+err.Error(), http.StatusBadGateway)
			return
		}
		p.Answered(r, resp.StatusCode, b)
		answer = bytes.NewReader(b)
	}
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, answer)
}

// Reset closes the client's connection with an RST (linger 0): "connection
// reset by peer". Not hijackable, the nearest thing is an answer the client
// cannot read.
func Reset(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic(http.ErrAbortHandler)
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = conn.Close()
}

// awsError is one service's error answer: S3 answers XML; the JSON
// protocols put the type in __type (and, for SQS, the query-compatible
// x-amzn-query-error header the SDK reads).
type awsError struct {
	status                       int
	contentType, typ, msg, query string
}

// throttles answer a throttled request as each service does; internalErrors
// are its 500 for a request it may have applied ("" for other services).
var (
	throttles = map[string]awsError{
		"dynamodb": {http.StatusBadRequest, "application/x-amz-json-1.0", "com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException",
			"The level of configured provisioned throughput for the table was exceeded. Consider increasing your provisioning level with the UpdateTable API.", ""},
		"sqs": {http.StatusBadRequest, "application/x-amz-json-1.0", "com.amazonaws.sqs#ThrottlingException", "Rate exceeded", "ThrottlingException;Sender"},
		"s3":  {http.StatusServiceUnavailable, "application/xml", "SlowDown", "Please reduce your request rate.", ""},
		"":    {http.StatusBadRequest, "application/x-amz-json-1.1", "ThrottlingException", "Rate exceeded", ""},
	}
	internalErrors = map[string]awsError{
		"dynamodb": {http.StatusInternalServerError, "application/x-amz-json-1.0", "com.amazonaws.dynamodb.v20120810#InternalServerError", "Internal server error", ""},
		"sqs":      {http.StatusInternalServerError, "application/x-amz-json-1.0", "com.amazonaws.sqs#InternalError", "We encountered an internal error. Please try again.", "InternalError;Receiver"},
		"s3":       {http.StatusInternalServerError, "application/xml", "InternalError", "We encountered an internal error. Please try again.", ""},
		"":         {http.StatusInternalServerError, "application/x-amz-json-1.1", "InternalFailure", "An internal error occurred.", ""},
	}
)

func writeAWSError(w http.ResponseWriter, errs map[string]awsError, op Op) {
	e, ok := errs[op.Service()]
	if !ok {
		e = errs[""]
	}
	w.Header().Set("Content-Type", e.contentType)
	if e.contentType == "application/xml" {
		w.WriteHeader(e.status)
		fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>%s</Code><Message>%s</Message></Error>`, e.typ, e.msg)
		return
	}
	w.Header().Set("X-Amzn-Requestid", fmt.Sprintf("FAULTPROXY%018d", time.Now().UnixNano()%1e18))
	if e.query != "" {
		w.Header().Set("X-Amzn-Query-Error", e.query)
	}
	w.WriteHeader(e.status)
	fmt.Fprintf(w, `{"__type":%q,"message":%q}`, e.typ, e.msg)
}

// Rule selects requests and the faults they may get.
type Rule struct {
	// Op matches requests whose Op has this prefix ("dynamodb.UpdateItem",
	// "sqs.", "" for all).
	Op string
	// Contains, when set, further requires the body to contain it (e.g. the
	// "stage_completed" history event only a stage's Complete writes).
	Contains string
	// Nth > 0 fires on exactly the job's n-th request matching the rule;
	// otherwise each matching request fires with probability Rate.
	Nth      int
	Rate     float64
	Kinds    []Kind        // fault kinds the seed chooses from
	MaxDelay time.Duration // bounds a Delay fault (default 1 s): the seed picks in [MaxDelay/4, MaxDelay].
}

// Plan is a seeded Decider: the same seed, job, op and ordinal give the same decision.
type Plan struct {
	Seed  int64
	Rules []Rule // apply to every registered job; Jobs[i], tried first, only to job i.
	Jobs  map[int][]Rule
	// MaxPerJob caps faults per job (0: none), so chance alone cannot
	// exhaust a job's retry budget.
	MaxPerJob int

	mu       sync.Mutex
	injected map[int]int
	matched  map[string]int // "<job>|<rule>" → matching requests seen
}

// Decide implements Decider.
func (p *Plan) Decide(job int, op Op, n int, body []byte) (Fault, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.injected == nil {
		p.injected, p.matched = map[int]int{}, map[string]int{}
	}
	rules := append(append([]Rule(nil), p.Jobs[job]...), p.Rules...)
	for i, r := range rules {
		if !strings.HasPrefix(string(op), r.Op) || (r.Contains != "" && !bytes.Contains(body, []byte(r.Contains))) || len(r.Kinds) == 0 {
			continue
		}
		key := fmt.Sprintf("%d|%d", job, i)
		p.matched[key]++
		if i >= len(p.Jobs[job]) && p.MaxPerJob > 0 && p.injected[job] >= p.MaxPerJob {
			continue // the cap limits chance, not a job's own rules
		}
		h := p.hash(job, op, n, i)
		if r.Nth > 0 {
			if p.matched[key] != r.Nth {
				continue
			}
		} else if float64(h%1_000_000)/1_000_000 >= r.Rate {
			continue
		}
		k := r.Kinds[(h/1_000_000)%uint64(len(r.Kinds))]
		f := Fault{Kind: k}
		if k == Delay {
			maxD := r.MaxDelay
			if maxD <= 0 {
				maxD = time.Second
			}
			f.Delay = maxD/4 + time.Duration((h>>20)%uint64(maxD-maxD/4+1))
		}
		p.injected[job]++
		return f, true
	}
	return Fault{}, false
}

func (p *Plan) hash(job int, op Op, n, rule int) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d|%d|%s|%d|%d", p.Seed, job, op, n, rule)
	return h.Sum64()
}

// KillBootstrapPeer SIGKILLs the local process owning the client end of the
// TCP connection remote (as the server saw it), if it is a function process
// (program "bootstrap", as provided.al2023's), and returns its pid. Linux
// only: it reads /proc.
func KillBootstrapPeer(remote string) (string, error) {
	pid, err := PeerPID(remote)
	if err != nil {
		return "", err
	}
	if name := ProgramName(pid); name != "bootstrap" {
		return "", fmt.Errorf("peer pid %d runs %q, not a function bootstrap", pid, name)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		return "", fmt.Errorf("kill %d: %w", pid, err)
	}
	return strconv.Itoa(pid), nil
}

// ProgramName is the base name of pid's program (argv[0]), "" if unknown.
func ProgramName(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil || len(b) == 0 {
		return ""
	}
	argv0, _, _ := strings.Cut(string(b), "\x00")
	return filepath.Base(argv0)
}

// PeerPID finds the pid owning the loopback socket whose local port is
// remote's port.
func PeerPID(remote string) (int, error) {
	_, portStr, err := net.SplitHostPort(remote)
	if err != nil {
		return 0, err
	}
	port, err := strconv.Atoi(portStr)
	if err != nil {
		return 0, err
	}
	hexPort := fmt.Sprintf(":%04X", port)
	inodes, err := sockets(func(f []string) bool { return strings.HasSuffix(f[1], hexPort) })
	if err != nil || len(inodes) == 0 {
		return 0, errors.Join(err, fmt.Errorf("no socket with local port %d", port))
	}
	pid := 0
	err = holders(inodes, func(p int) bool { pid = p; return false })
	if err == nil && pid == 0 {
		err = fmt.Errorf("no process holds the socket with local port %d", port)
	}
	return pid, err
}

// KillBootstrapsConnectedTo SIGKILLs every function process (program
// "bootstrap") holding an established TCP connection to 127.0.0.1:port — a
// worker in the middle of talking to a stand-in (an SMTP relay, the LLM) —
// and returns their pids.
func KillBootstrapsConnectedTo(port int) ([]int, error) {
	hexPort := fmt.Sprintf(":%04X", port)
	// rem_address is the peer; state 01 is ESTABLISHED.
	inodes, err := sockets(func(f []string) bool { return strings.HasSuffix(f[2], hexPort) && f[3] == "01" })
	if err != nil || len(inodes) == 0 {
		return nil, errors.Join(err, fmt.Errorf("no connection to port %d", port))
	}
	var killed []int
	err = holders(inodes, func(pid int) bool {
		if ProgramName(pid) == "bootstrap" && syscall.Kill(pid, syscall.SIGKILL) == nil {
			killed = append(killed, pid)
		}
		return true
	})
	if err == nil && len(killed) == 0 {
		err = fmt.Errorf("no function process holds a connection to port %d", port)
	}
	return killed, err
}

// sockets are the inodes ("socket:[N]") of the TCP sockets in
// /proc/net/tcp and tcp6 whose fields match accepts.
func sockets(match func(fields []string) bool) (map[string]bool, error) {
	inodes := map[string]bool{}
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(table)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		for _, line := range strings.Split(string(b), "\n")[1:] { // after the header
			if f := strings.Fields(line); len(f) >= 10 && f[9] != "0" && match(f) {
				inodes["socket:["+f[9]+"]"] = true
			}
		}
	}
	return inodes, nil
}

// holders calls found with each other process holding one of inodes, while
// found returns true.
func holders(inodes map[string]bool, found func(pid int) bool) error {
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return err
	}
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		fds, _ := os.ReadDir(filepath.Join("/proc", p.Name(), "fd")) // gone, or not ours
		for _, fd := range fds {
			if l, err := os.Readlink(filepath.Join("/proc", p.Name(), "fd", fd.Name())); err == nil && inodes[l] {
				if !found(pid) {
					return nil
				}
				break
			}
		}
	}
	return nil
}
