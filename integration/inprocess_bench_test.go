//go:build integration

package integration

import (
	"context"
	"encoding/json"
	"io"
	"maps"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/criticizer/criticizer/shared/artifacts"
	"github.com/criticizer/criticizer/shared/backoff"
	"github.com/criticizer/criticizer/shared/config"
	"github.com/criticizer/criticizer/shared/depot"
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/envelope"
	"github.com/criticizer/criticizer/shared/evidence"
	"github.com/criticizer/criticizer/shared/fetchstage"
	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/llm"
	"github.com/criticizer/criticizer/shared/llmstage"
	"github.com/criticizer/criticizer/shared/notifystage"
	"github.com/criticizer/criticizer/shared/obs"
	"github.com/criticizer/criticizer/shared/p4"
	"github.com/criticizer/criticizer/shared/queue"
	"github.com/criticizer/criticizer/shared/recipients"
	"github.com/criticizer/criticizer/shared/redact"
	"github.com/criticizer/criticizer/shared/result"
	"github.com/criticizer/criticizer/shared/secrets"
	"github.com/criticizer/criticizer/shared/smtpmail"
	"github.com/criticizer/criticizer/shared/stage"
)

// BenchmarkInProcessStages measures the stages' own throughput, without the
// emulator's Lambda runtime in the way: the fetch, llm and notify stage
// runtimes run in this process, wired from the deployed functions' settings
// (same p4 stand-in and depot, LLM stand-in, SMTP stand-in and delivery
// log), against the emulator's DynamoDB, SQS, S3 and Secrets Manager. They
// consume scratch queues of their own, so the deployed functions never see
// these jobs. One op is a batch of jobs created and enqueued at once, waited
// for until every job succeeded; `make bench` reports it as jobs/s beside
// BenchmarkEndToEnd's deployed figure.
func BenchmarkInProcessStages(b *testing.B) {
	const batch = 20
	p := newInProcess(b)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	p.start(ctx, &wg, 4)
	b.Cleanup(func() { cancel(); wg.Wait() })

	jobs := 0
	for b.Loop() {
		ids := make([]string, 0, batch)
		for range batch {
			j := createJob(b, newChange(b, 12345), []string{"reviewers@example.com"})
			if err := p.queues.Send(ctx, envelope.ForJob(j, domain.StageFetch, job.Now())); err != nil {
				b.Fatal(err)
			}
			ids = append(ids, j.ID)
		}
		p.waitAll(b, ids, untilSettled())
		jobs += batch
	}
	b.ReportMetric(float64(jobs)/b.Elapsed().Seconds(), "jobs/s")
	if err := p.err(); err != nil {
		b.Fatal(err)
	}
}

// inProcess is the three stage runtimes on their scratch queues.
type inProcess struct {
	queues   *queue.Queues
	urls     map[domain.Stage]string
	runtimes map[domain.Stage]*stage.Runtime

	mu       sync.Mutex
	firstErr error
}

func newInProcess(b *testing.B) *inProcess {
	b.Helper()
	ctx := context.Background()
	urls := map[domain.Stage]string{domain.StageFetch: scratch(b), domain.StageLLM: scratch(b), domain.StageNotify: scratch(b)}
	p := &inProcess{urls: urls, queues: queue.New(env.sqs, urls, stageURLs("DlqUrl"))}
	sm := secrets.New(env.sm, time.Minute)
	s3c := s3.NewFromConfig(env.local.AWS, func(o *s3.Options) { o.UsePathStyle = true })
	raw, redacted := artifacts.New(s3c, env.out["RawBucketName"]), artifacts.New(s3c, env.out["RedactedBucketName"])
	metrics := obs.NewMetrics(io.Discard, "bench")

	// fetch, as functions/fetch wires it
	fv := functionEnv(b, "FetchFunctionName")
	home := b.TempDir()
	runner, err := p4.NewRunner(p4.Config{Path: fv["P4_BIN"], Port: fv["P4PORT"], User: fv["P4USER"], Client: fv["P4CLIENT"],
		Timeout: 30 * time.Second, Tickets: home + "/tickets", Trust: home + "/trust", Home: home}, env.quiet)
	if err != nil {
		b.Fatal(err)
	}
	if id := fv["P4_SECRET_ID"]; id != "" {
		runner.SetCredentials(secrets.NewRotating(sm, id, func(v string) (p4.Credential, error) { return p4.ParseCredential(id, v) }))
	}
	allow, err := depot.ParseAllowList(fv["DEPOT_ALLOWLIST"], env.quiet)
	if err != nil {
		b.Fatal(err)
	}
	fetcher, err := p4.NewFetcher(runner, allow, env.quiet)
	if err != nil {
		b.Fatal(err)
	}
	fetcher.CheckProtections()
	red, err := redact.New(redact.PolicyFromConfig(config.NewReaderFrom(fv)))
	if err != nil {
		b.Fatal(err)
	}
	fetchPolicy, err := recipients.Load(config.NewReaderFrom(fv))
	if err != nil {
		b.Fatal(err)
	}
	fetch := &fetchstage.Fetch{P4: fetcher, Redactor: red, Raw: raw, Redacted: redacted, Log: env.quiet, Recipients: fetchPolicy, Metrics: metrics}

	// review, as functions/llm wires it (OpenAI-compatible provider)
	rv := functionEnv(b, "LlmFunctionName")
	key, err := sm.Field(ctx, rv["LLM_SECRET_ID"], "api_key")
	if err != nil {
		b.Fatal(err)
	}
	provider, err := llm.New(cmpOr(rv["LLM_PROVIDER"], llm.OpenAI), llm.Config{Endpoint: rv["LLM_ENDPOINT"], Model: rv["LLM_MODEL"],
		Timeout: 45 * time.Second, Schema: result.SchemaJSON(), Logger: env.quiet}, llm.Credentials{APIKey: key})
	if err != nil {
		b.Fatal(err)
	}
	guard, err := redact.New(redact.PolicyFromConfig(config.NewReaderFrom(rv)))
	if err != nil {
		b.Fatal(err)
	}
	rev := &llmstage.LLM{Redacted: redacted, Guard: guard, LLM: provider, Model: rv["LLM_MODEL"], Metrics: metrics, Log: env.quiet}

	// notify, as functions/notify wires it for SMTP with the relay's message lookup
	nv := functionEnv(b, "NotifyFunctionName")
	port, err := strconv.Atoi(nv["SMTP_PORT"])
	if err != nil {
		b.Fatalf("SMTP_PORT %q: %v", nv["SMTP_PORT"], err)
	}
	user, err := sm.Field(ctx, nv["SMTP_SECRET_ID"], "username")
	if err != nil {
		b.Fatal(err)
	}
	pass, err := sm.Field(ctx, nv["SMTP_SECRET_ID"], "password")
	if err != nil {
		b.Fatal(err)
	}
	sender, err := smtpmail.New(smtpmail.Config{Host: nv["SMTP_HOST"], Port: port, From: nv["SMTP_FROM"],
		TLS: smtpmail.TLSMode(cmpOr(nv["SMTP_TLS"], "starttls")), Username: user, Password: pass, Timeout: smtpmail.DefaultTimeout}, env.quiet)
	if err != nil {
		b.Fatal(err)
	}
	scrub, err := redact.New(redact.Policy{RedactEmails: true})
	if err != nil {
		b.Fatal(err)
	}
	notifyPolicy, err := recipients.Load(config.NewReaderFrom(nv))
	if err != nil {
		b.Fatal(err)
	}
	note := &notifystage.Notify{Outbox: env.outbox, Secret: env.deliveryKey, Artifacts: redacted, Email: smtpmail.NewChannel(sender.Send, evidence.HTTP{URL: nv["SMTP_LOOKUP_URL"]}),
		From: nv["SMTP_FROM"], HTML: true, Log: env.quiet, Window: evidence.DefaultWindow("smtp"), Recipients: &recipients.Gate{Policy: notifyPolicy, Log: env.quiet, Metrics: metrics, Stage: string(domain.StageNotify)}}

	rt := func(s domain.Stage, proc stage.Processor, sanitize func(string) string) *stage.Runtime {
		return &stage.Runtime{Stage: s, Jobs: env.jobs, Queues: p.queues, Processor: proc, Lease: env.lease, MaxAttempts: 5,
			Backoff: backoff.Default, Log: env.quiet, Metrics: metrics, Sanitize: sanitize}
	}
	p.runtimes = map[domain.Stage]*stage.Runtime{
		domain.StageFetch:  rt(domain.StageFetch, fetch, red.Sanitize),
		domain.StageLLM:    rt(domain.StageLLM, rev, guard.Sanitize),
		domain.StageNotify: rt(domain.StageNotify, note, scrub.Sanitize),
	}
	return p
}

// functionEnv is a deployed function's environment, by its stack output.
func functionEnv(b testing.TB, output string) map[string]string {
	b.Helper()
	cfg, err := env.lambda.GetFunctionConfiguration(context.Background(), &lambda.GetFunctionConfigurationInput{FunctionName: aws.String(env.out[output])})
	if err != nil {
		b.Fatal(err)
	}
	if cfg.Environment == nil {
		b.Fatalf("%s has no environment", env.out[output])
	}
	return maps.Clone(cfg.Environment.Variables)
}

func cmpOr(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// start runs `workers` pollers per stage until ctx ends, each doing what an
// SQS event source mapping does: receive a batch, hand it to the runtime,
// delete what it did not report as failed.
func (p *inProcess) start(ctx context.Context, wg *sync.WaitGroup, workers int) {
	for s, rt := range p.runtimes {
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for ctx.Err() == nil {
					if err := p.poll(ctx, p.urls[s], rt); err != nil && ctx.Err() == nil {
						p.fail(err)
						return
					}
				}
			}()
		}
	}
}

func (p *inProcess) poll(ctx context.Context, url string, rt *stage.Runtime) error {
	out, err := env.sqs.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &url, MaxNumberOfMessages: 10, WaitTimeSeconds: 1,
		VisibilityTimeout: int32(2 * env.lease / time.Second), MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameAll}})
	if err != nil || len(out.Messages) == 0 {
		return err
	}
	var ev events.SQSEvent
	for _, m := range out.Messages {
		attrs := map[string]string{}
		for k, v := range m.Attributes {
			attrs[k] = v
		}
		ev.Records = append(ev.Records, events.SQSMessage{MessageId: aws.ToString(m.MessageId), ReceiptHandle: aws.ToString(m.ReceiptHandle),
			Body: aws.ToString(m.Body), Attributes: attrs})
	}
	resp, err := rt.Handle(ctx, ev)
	if err != nil {
		return err
	}
	failed := map[string]bool{}
	for _, f := range resp.BatchItemFailures {
		failed[f.ItemIdentifier] = true
	}
	var del []sqstypes.DeleteMessageBatchRequestEntry
	for i, r := range ev.Records {
		if !failed[r.MessageId] {
			del = append(del, sqstypes.DeleteMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), ReceiptHandle: aws.String(r.ReceiptHandle)})
		}
	}
	if len(del) == 0 {
		return nil
	}
	_, err = env.sqs.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: &url, Entries: del})
	return err
}

func (p *inProcess) fail(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.firstErr == nil {
		p.firstErr = err
	}
}

func (p *inProcess) err() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.firstErr
}

// waitAll polls until every job succeeded; a failed job, a poller's error
// or the timeout ends the benchmark with what went wrong.
func (p *inProcess) waitAll(b *testing.B, ids []string, timeout time.Duration) {
	b.Helper()
	pending := map[string]bool{}
	for _, id := range ids {
		pending[id] = true
	}
	deadline := time.Now().Add(timeout)
	for len(pending) > 0 {
		if err := p.err(); err != nil {
			b.Fatal("in-process stage:", err)
		}
		for id := range pending {
			j, err := env.jobs.Get(context.Background(), id)
			switch {
			case err != nil:
			case j.State == job.Succeeded:
				delete(pending, id)
			case j.State == job.Failed || time.Now().After(deadline):
				hist, _ := json.MarshalIndent(j.History, "", "  ")
				last := ""
				if r := j.Stages[j.Stage]; r != nil {
					last = string(r.LastErrorClass) + ": " + r.LastError
				}
				b.Fatalf("job %s: %s at stage %s (%s), want succeeded\nhistory %s", id, j.State, j.Stage, last, hist)
			}
		}
		if len(pending) > 0 && time.Now().After(deadline) {
			b.Fatalf("%d jobs not found succeeded after %s", len(pending), timeout)
		}
		time.Sleep(20 * time.Millisecond) // poll interval, not a synchronisation
	}
}
