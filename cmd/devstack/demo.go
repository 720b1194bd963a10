package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/criticizer/criticizer/internal/devstack"
	smtpstandin "github.com/criticizer/criticizer/internal/standin/smtp"
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/webhook"
)

const demoPoll = 500 * time.Millisecond

// demoJobTimeout is how long the demo follows a job: longer with a local
// model server, whose calls take tens of seconds.
var demoJobTimeout = 90 * time.Second

// tinyModel is set with -llm local: a 135M model may answer unusably.
var tinyModel bool

// unusableAnswer reports, with the local model, a job the model's answer
// failed (SCHEMA_INVALID: stated once, not retried): the demo says so and
// goes on, as the suite's TestReviewByARealModelServer accepts it.
func unusableAnswer(st *job.Job) bool {
	if !tinyModel || st.State != job.Failed || st.StageRecord(domain.StageLLM).LastErrorClass != failure.SchemaInvalid {
		return false
	}
	progress("the 135M model's answer was unusable: SCHEMA_INVALID, stated once and not retried; a real model answers these")
	return true
}

// demo starts the local environment, sends the sample webhook through API
// Gateway, follows the job and prints the e-mails it produced; then runs a
// Swarm review's test run and prints the comments Swarm received.
func demo(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("demo", flag.ExitOnError)
	port := fs.Int("port", 0, "emulator port on 127.0.0.1 (0 picks a free one)")
	keep := fs.Bool("keep", false, "keep the environment running until Ctrl-C")
	model := fs.String("llm", "standin", "standin: the LLM stand-in; local: a real model server (llama.cpp with SmolLM2, installed once by localstack/llama.sh)")
	_ = fs.Parse(args)
	if *model != "standin" && *model != "local" {
		return fmt.Errorf("-llm %q: want standin or local", *model)
	}

	root, err := devstack.RepoRoot()
	if err != nil {
		return err
	}
	sample := filepath.Join(root, "events", "webhook-post.json")
	req, ok, err := readProxyRequest(sample)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("%s is not an API Gateway proxy request", sample)
	}
	body, err := req.body()
	var hook webhook.Request
	if err == nil {
		hook, err = webhook.Parse(body)
	}
	if err != nil {
		return fmt.Errorf("%s: body: %w", sample, err)
	}
	start := time.Now()
	l, err := startLocal(ctx, *port)
	if err != nil {
		return err
	}
	defer stopLocal(l)
	if *model == "local" {
		ms, err := devstack.StartModelServer(ctx, devstack.ModelServerOptions{APIKey: l.Secrets["LLM API key"]})
		if err != nil {
			return err
		}
		defer func() { _ = ms.Stop() }()
		if err := l.UseModelServer(ctx, ms); err != nil {
			return fmt.Errorf("point the llm function at the model server: %w", err)
		}
		demoJobTimeout, tinyModel = 2*devstack.ModelFunctionTimeout, true
		progress("reviews by %s on %s (a 135M model: its findings are a tiny model's)", devstack.LocalModel, ms.Endpoint)
	}
	result := runDemo(ctx, l, body, hook)
	if result == nil {
		progress("demo done in %s", since(start))
	}
	if *keep && ctx.Err() == nil {
		printEnv(l.Emulator.Endpoint, l.APIURL, l.StackName)
		progress("running until Ctrl-C")
		<-ctx.Done()
	}
	return result
}

// stages is e.g. "fetch succeeded (1 attempt), llm failed (5 attempts, last_error_class llm_timeout), …".
func stages(j *job.Job) string {
	var parts []string
	for _, name := range domain.Stages {
		st, ok := j.Stages[name]
		if !ok {
			continue
		}
		p := fmt.Sprintf("%s %s (%d %s", name, st.Status, st.Attempts, domain.Plural(st.Attempts, "attempt"))
		if st.LastErrorClass != "" {
			p += ", last_error_class " + string(st.LastErrorClass)
		}
		parts = append(parts, p+")")
	}
	return strings.Join(parts, ", ")
}

func runDemo(ctx context.Context, l *devstack.Local, body []byte, hook webhook.Request) error {
	const post = "/webhooks/changelist"
	code, answer, err := l.Call(ctx, http.MethodPost, post, body)
	if err != nil {
		return fmt.Errorf("POST %s: %w", post, err)
	}
	fmt.Printf("POST %s (changelist %d v%d): HTTP %d\n", post, hook.ChangelistID, hook.ReviewVersion, code)
	printJSON(answer)
	id := devstack.CreatedJob(answer)
	if code/100 != 2 || id == "" {
		return fmt.Errorf("the webhook was not accepted (HTTP %d)", code)
	}
	st, raw, err := followJob(ctx, l, id)
	if err != nil {
		return err
	}
	mails := mailsFor(ctx, l.SMTP, fmt.Sprintf("CL %d v%d", hook.ChangelistID, hook.ReviewVersion), st.State == job.Succeeded)
	for i, m := range mails {
		if err := printMail(id, i, len(mails), m.From, m.To, m.Raw); err != nil {
			return err
		}
	}
	fmt.Printf("\n===== job %s =====\n", id)
	printJSON(raw)
	fmt.Printf("job %s %s: %d %s, %d %s\n", id, st.State, st.FindingCount, domain.Plural(st.FindingCount, "finding"), len(mails), domain.Plural(len(mails), "e-mail"))

	switch {
	case unusableAnswer(st):
	case st.State != job.Succeeded:
		return fmt.Errorf("job %s %s: %s", id, st.State, stages(st))
	case len(mails) == 0:
		return fmt.Errorf("job %s succeeded but the SMTP stand-in received no e-mail for CL %d v%d: %s", id, hook.ChangelistID, hook.ReviewVersion, stages(st))
	}
	return runSwarmDemo(ctx, l)
}

// followJob polls GET /jobs/{id} until the job ends, printing each change of
// state, stage or attempt once. It returns the last status and its JSON.
func followJob(ctx context.Context, l *devstack.Local, id string) (*job.Job, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, demoJobTimeout)
	defer cancel()
	path := "/jobs/" + id
	start := time.Now()
	tick := time.NewTicker(demoPoll)
	defer tick.Stop()
	var (
		st      = &job.Job{}
		raw     []byte
		last    string
		lastErr error
	)
	for {
		code, b, err := l.Call(ctx, http.MethodGet, path, nil)
		var cur job.Job
		switch {
		case err != nil:
			lastErr = err
		case code != http.StatusOK:
			lastErr = fmt.Errorf("GET %s: HTTP %d: %s", path, code, bytes.TrimSpace(b))
		case json.Unmarshal(b, &cur) != nil:
			lastErr = fmt.Errorf("GET %s: not a job status: %s", path, bytes.TrimSpace(b))
		default:
			st, raw, lastErr = &cur, b, nil
			line := fmt.Sprintf("state %s, stage %s", st.State, st.Stage)
			if s, ok := st.Stages[st.Stage]; ok && !st.Terminal() {
				line += " (" + string(s.Status)
				if s.Attempts > 0 {
					line += fmt.Sprintf(", attempt %d", s.Attempts)
				}
				line += ")"
			}
			if line != last {
				fmt.Printf("%6s  %s\n", since(start), line)
				last = line
			}
			if st.Terminal() {
				return st, raw, nil
			}
		}
		select {
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				why := "last state " + string(st.State) + ": " + stages(st)
				if raw == nil {
					why = fmt.Sprint("no status: ", lastErr)
				}
				return st, raw, fmt.Errorf("job %s not finished after %s (%s)", id, demoJobTimeout, why)
			}
			return st, raw, fmt.Errorf("interrupted while job %s was %s", id, st.State)
		case <-tick.C:
		}
	}
}

// mailsFor returns the messages the SMTP stand-in accepted whose subject
// names the changelist version. When the job succeeded they were sent before
// it was marked, but allow a moment for stragglers if none is there yet.
func mailsFor(ctx context.Context, srv *smtpstandin.Server, subject string, wait bool) []smtpstandin.Message {
	deadline := time.Now().Add(3 * time.Second)
	for {
		out := slices.DeleteFunc(srv.Messages(), func(m smtpstandin.Message) bool { return !strings.Contains(m.Subject, subject) })
		if len(out) > 0 || !wait || time.Now().After(deadline) || ctx.Err() != nil {
			return out
		}
		time.Sleep(100 * time.Millisecond)
	}
}
