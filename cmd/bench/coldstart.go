package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"
)

// benchSecret answers every GetSecretValue: one JSON object with the fields
// each function's secret parser wants (SMTP, LLM, p4), so that a function's
// cold start runs its real secret read and client build.
const benchSecret = `{"username":"bench","password":"bench-password","api_key":"bench-key"}`

// The settings groups the functions share, beyond the common settings.
var (
	p4Env   = []string{"P4_BIN=/bin/true", "P4PORT=127.0.0.1:1666", "P4USER=bench", "DEPOT_ALLOWLIST=//depot/...", "P4_SECRET_ID=bench/p4"}
	llmEnv  = []string{"LLM_PROVIDER=openai", "LLM_ENDPOINT=http://127.0.0.1:9", "LLM_MODEL=bench-model", "LLM_SECRET_ID=bench/llm"}
	smtpEnv = []string{"EMAIL_PROVIDER=smtp", "SMTP_HOST=127.0.0.1", "SMTP_PORT=2525", "SMTP_TLS=none", "SMTP_FROM=criticizer@example.com", "SMTP_SECRET_ID=bench/smtp"}
	mailEnv = append(slices.Clone(smtpEnv), "DELIVERY_KEY_SECRET_ID=bench/delivery", "RECIPIENT_DOMAINS=example.com")
)

// FunctionEnv is a minimal valid environment per function, beyond the common
// settings and the endpoints set by MeasureInit.
var FunctionEnv = map[string][]string{
	"fetch":     append(slices.Clone(p4Env), "RECIPIENT_DOMAINS=example.com"),
	"llm":       llmEnv,
	"notify":    mailEnv,
	"webhook":   {"WEBHOOK_SECRET_ID=bench/webhook", "RECIPIENT_DOMAINS=example.com"},
	"sweeper":   {"SMTP_FROM=criticizer@example.com", "DELIVERY_KEY_SECRET_ID=bench/delivery"},
	"sesevents": nil,
	"jobpage":   {"JOB_PAGE_SECRET_ID=bench/jobpage"},
	"doctor":    slices.Concat(p4Env, llmEnv, smtpEnv),
	"digest":    append(slices.Clone(mailEnv), `DIGEST_OWNERS={"//depot/...":["lead@example.com"]}`, "DIGEST_OPT_IN=lead@example.com"),
}

var commonEnv = []string{
	"CRITICIZER_ENV=bench", "LOG_LEVEL=error", "JOBS_TABLE=bench-jobs",
	"RAW_BUCKET=bench-raw", "REDACTED_BUCKET=bench-redacted",
	"FETCH_QUEUE_URL=http://127.0.0.1:9/000000000000/fetch", "LLM_QUEUE_URL=http://127.0.0.1:9/000000000000/llm",
	"NOTIFY_QUEUE_URL=http://127.0.0.1:9/000000000000/notify",
	"AWS_REGION=us-east-1", "AWS_ACCESS_KEY_ID=bench", "AWS_SECRET_ACCESS_KEY=bench", "AWS_EC2_METADATA_DISABLED=true",
	"TMPDIR=/tmp", "HOME=/tmp",
}

// fakeLambda serves the Lambda runtime API and the Secrets Manager calls
// a function makes while it starts, on one loopback listener.
type fakeLambda struct {
	ready chan time.Time // the first GET /runtime/invocation/next
	once  sync.Once
	mu    sync.Mutex
	notes []string // init errors and unexpected requests
}

func (f *fakeLambda) note(s string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.notes = append(f.notes, s)
}

func (f *fakeLambda) report() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return strings.Join(f.notes, "; ")
}

func (f *fakeLambda) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/2018-06-01/runtime/invocation/next":
		f.once.Do(func() { f.ready <- time.Now() })
		<-r.Context().Done() // no invocation: the process is stopped after this
	case r.URL.Path == "/2018-06-01/runtime/init/error":
		body, _ := io.ReadAll(io.LimitReader(r.Body, 4096))
		f.note("init error: " + string(body))
		w.WriteHeader(http.StatusAccepted)
	case r.Header.Get("X-Amz-Target") == "secretsmanager.GetSecretValue":
		var in struct {
			SecretID     string `json:"SecretId"`
			VersionStage string
		}
		_ = json.NewDecoder(r.Body).Decode(&in)
		w.Header().Set("Content-Type", "application/x-amz-json-1.1")
		if in.VersionStage != "" && in.VersionStage != "AWSCURRENT" {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"__type":"ResourceNotFoundException","message":"no such version"}`)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"ARN": "arn:aws:secretsmanager:us-east-1:000000000000:secret:" + in.SecretID,
			"Name": in.SecretID, "SecretString": benchSecret, "VersionId": "v1", "VersionStages": []string{"AWSCURRENT"}})
	default:
		f.note(fmt.Sprintf("unexpected request %s %s (target %q)", r.Method, r.URL.Path, r.Header.Get("X-Amz-Target")))
		http.Error(w, "not served by the bench", http.StatusNotImplemented)
	}
}

// MeasureInit runs bin once with a minimal valid environment pointed at a
// fake runtime API and returns the time from exec to the function's first
// request for an invocation: its whole initialisation, Go runtime included.
func MeasureInit(ctx context.Context, bin string, env []string) (time.Duration, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	fake := &fakeLambda{ready: make(chan time.Time, 1)}
	srv := &http.Server{Handler: fake, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()

	addr := ln.Addr().String()
	cmd := exec.CommandContext(ctx, bin)
	cmd.Env = append(slices.Clone(commonEnv), env...)
	cmd.Env = append(cmd.Env, "AWS_LAMBDA_RUNTIME_API="+addr, "AWS_ENDPOINT_URL=http://"+addr,
		"AWS_LAMBDA_FUNCTION_NAME=bench", "AWS_LAMBDA_FUNCTION_MEMORY_SIZE=512")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	exited := make(chan error, 1)
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	go func() { exited <- cmd.Wait() }()
	stop := func() {
		_ = cmd.Process.Kill() // the process this call started, by its handle
		<-exited
	}
	select {
	case at := <-fake.ready:
		stop()
		return at.Sub(start), nil
	case err := <-exited:
		return 0, fmt.Errorf("%s exited before asking for an invocation (%v): %s %s", bin, err, tail(out.String()), fake.report())
	case <-time.After(30 * time.Second):
		stop()
		return 0, errors.New(bin + " did not ask for an invocation within 30s: " + tail(out.String()) + " " + fake.report())
	case <-ctx.Done():
		stop()
		return 0, ctx.Err()
	}
}

func tail(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 600 {
		s = "…" + s[len(s)-600:]
	}
	return s
}
