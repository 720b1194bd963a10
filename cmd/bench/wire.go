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
)

// wireCounter sits between the deployed functions and the emulator (the
// emulator hands every function process its AWS_ENDPOINT_URL, this proxy's
// address) and counts what DynamoDB answers: requests by operation and the
// items each read evaluated — ScannedCount for a Query or Scan, which is
// what DynamoDB bills a read by, not what a filter keeps; one for a GetItem
// that found its item.
type wireCounter struct {
	mu       sync.Mutex
	upstream *url.URL
	requests map[string]int
	read     int
	ln       net.Listener
	srv      *http.Server
}

func newWireCounter() (*wireCounter, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	w := &wireCounter{requests: map[string]int{}, ln: ln}
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
	target := resp.Request.Header.Get("X-Amz-Target")
	prefix, op, ok := strings.Cut(target, ".")
	if !ok || !strings.HasPrefix(prefix, "DynamoDB_") {
		return nil
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	var out struct {
		ScannedCount *int
		Item         map[string]any
	}
	_ = json.Unmarshal(body, &out) // an error answer counts as a request only
	w.mu.Lock()
	defer w.mu.Unlock()
	w.requests[op]++
	switch {
	case out.ScannedCount != nil:
		w.read += *out.ScannedCount
	case out.Item != nil:
		w.read++
	}
	return nil
}

// take returns the counts since the last take and starts again.
func (w *wireCounter) take() (read int, requests map[string]int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	read, requests = w.read, w.requests
	w.read, w.requests = 0, map[string]int{}
	return read, requests
}

func (w *wireCounter) Close() error { return w.srv.Close() }
