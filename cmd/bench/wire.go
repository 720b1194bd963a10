package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/criticizer/criticizer/internal/faultproxy"
)

// wireCounter sits between the deployed functions and the emulator (the
// emulator hands every function process its AWS_ENDPOINT_URL, this proxy's
// address) and counts their DynamoDB and SQS requests by function and
// operation, and the DynamoDB items each read evaluated — ScannedCount for a
// Query or Scan, which is what DynamoDB bills a read by, not what a filter
// keeps; one for a GetItem that found its item. The function is the
// application id every function's SDK client puts in its User-Agent
// (coldstart.Load sets it).
type wireCounter struct {
	mu       sync.Mutex
	upstream *url.URL
	calls    map[call]int
	read     int
	last     time.Time // of the last request counted
	ln       net.Listener
	srv      *http.Server
}

// call is a function's request kind: Fn "fetch", Op "dynamodb.GetItem".
type call struct{ Fn, Op string }

func newWireCounter() (*wireCounter, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	w := &wireCounter{calls: map[call]int{}, ln: ln}
	rp := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			w.mu.Lock()
			up := w.upstream
			w.mu.Unlock()
			r.SetURL(up)
			r.Out.Host = r.In.Host // the emulator routes (and signatures cover) the host the function addressed
			r.Out.Header.Del("Accept-Encoding")
		},
		ModifyResponse: w.count,
	}
	w.srv = &http.Server{Handler: rp}
	go func() { _ = w.srv.Serve(ln) }()
	return w, nil
}

func (w *wireCounter) URL() string { return "http://" + w.ln.Addr().String() }

// setUpstream is the emulator's endpoint, known once it runs.
func (w *wireCounter) setUpstream(endpoint string) string {
	u, _ := url.Parse(endpoint) // an address the emulator built itself
	w.mu.Lock()
	w.upstream = u
	w.mu.Unlock()
	return w.URL()
}

func (w *wireCounter) count(resp *http.Response) error {
	op := string(faultproxy.Classify(resp.Request))
	if !strings.HasPrefix(op, "dynamodb.") && !strings.HasPrefix(op, "sqs.") {
		return nil
	}
	c := call{Fn: appID(resp.Request.Header.Get("User-Agent")), Op: op}
	var out struct {
		ScannedCount *int
		Item         map[string]any
	}
	if strings.HasPrefix(op, "dynamodb.") {
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		resp.Body = io.NopCloser(bytes.NewReader(body))
		_ = json.Unmarshal(body, &out) // an error answer counts as a request only
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.calls[c]++
	w.last = time.Now()
	switch {
	case out.ScannedCount != nil:
		w.read += *out.ScannedCount
	case out.Item != nil:
		w.read++
	}
	return nil
}

// appID is the "app/<id>" of an SDK User-Agent, "?" without one.
func appID(ua string) string {
	for _, f := range strings.Fields(ua) {
		if id, ok := strings.CutPrefix(f, "app/"); ok {
			return id
		}
	}
	return "?"
}

// take returns the counts since the last take and starts again.
func (w *wireCounter) take() (read int, calls map[call]int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	read, calls = w.read, w.calls
	w.read, w.calls = 0, map[call]int{}
	return read, calls
}

// idle is how long ago the last request was counted.
func (w *wireCounter) idle() time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return time.Since(w.last)
}

func (w *wireCounter) Close() error { return w.srv.Close() }
