package main

import (
	"encoding/json"
	"net/http"
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
	*faultproxy.Proxy // with no Decider: forwards everything
	mu                sync.Mutex
	calls             map[call]int
	read              int
	last              time.Time // of the last request counted
}

// call is a function's request kind: Fn "fetch", Op "dynamodb.GetItem".
type call struct{ Fn, Op string }

func newWireCounter() (*wireCounter, error) {
	w := &wireCounter{Proxy: faultproxy.New(), calls: map[call]int{}}
	w.Answered = w.count
	return w, w.Start()
}

// setUpstream is the emulator's endpoint, known once it runs.
func (w *wireCounter) setUpstream(endpoint string) string {
	_ = w.SetUpstream(endpoint) // an address the emulator built itself
	return w.URL()
}

func (w *wireCounter) count(r *http.Request, _ int, answer []byte) {
	op := string(faultproxy.Classify(r))
	if !strings.HasPrefix(op, "dynamodb.") && !strings.HasPrefix(op, "sqs.") {
		return
	}
	c := call{Fn: appID(r.Header.Get("User-Agent")), Op: op}
	var out struct {
		ScannedCount *int
		Item         map[string]any
	}
	if strings.HasPrefix(op, "dynamodb.") {
		_ = json.Unmarshal(answer, &out) // an error answer counts as a request only
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
