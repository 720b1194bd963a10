// Package stage owns the runtime every pipeline stage (fetch, llm, notify)
// runs inside: it turns an SQS batch into leased, budgeted, classified work.
//
// Per message: decode the envelope (malformed → DLQ), apply a replay or
// restart, claim the stage lease (one conditional write), keep it alive with
// a heartbeat (a failed renewal cancels the work), run the Processor, then
// complete and enqueue the next stage, retry with full-jitter backoff through
// the message's visibility, or dead-letter. Errors are classified once, here;
// a panic is an INTERNAL_BUG, never a failed batch.
package stage

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/google/uuid"

	"github.com/criticizer/criticizer/shared/backoff"
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/envelope"
	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/obs"
	"github.com/criticizer/criticizer/shared/sanitize"
)

// Processor does one stage's work for a job. It must be idempotent (a crash
// reprocesses the job) and stop side effects when ctx is cancelled.
type Processor interface {
	Process(ctx context.Context, j *job.Job) (job.Result, error)
}

// ProcessorFunc adapts a function to Processor.
type ProcessorFunc func(ctx context.Context, j *job.Job) (job.Result, error)

// Process calls f.
func (f ProcessorFunc) Process(ctx context.Context, j *job.Job) (job.Result, error) {
	return f(ctx, j)
}

// Jobs is the part of the job store the runtime uses.
type Jobs interface {
	Claim(ctx context.Context, id string, stage domain.Stage, l job.Lease, maxAttempts int) (*job.Job, error)
	Renew(ctx context.Context, id string, stage domain.Stage, l job.Lease) error
	Complete(ctx context.Context, id string, stage domain.Stage, l job.Lease, r job.Result, sweepAfter time.Duration) (*job.Job, error)
	Retry(ctx context.Context, id string, stage domain.Stage, l job.Lease, f job.FailureInfo, delay time.Duration) (*job.Job, error)
	DeadLetter(ctx context.Context, id string, stage domain.Stage, l job.Lease, f job.FailureInfo, dlID, body string) (*job.Job, error)
	MarkDeadLetterSent(ctx context.Context, id string, stage domain.Stage, dlID string, now time.Time) error
	Replay(ctx context.Context, id string, stage domain.Stage, dlID string, dlClass failure.Class, now time.Time, sweepAfter time.Duration) (*job.Job, error)
	Restart(ctx context.Context, id, actor, requestID string, now time.Time, sweepAfter time.Duration) (*job.Job, error)
	// RecordOperator appends to the job's history without changing its state.
	RecordOperator(ctx context.Context, id, action, actor, note string, now time.Time) error
}

// Queues is the part of the SQS wrapper the runtime uses.
type Queues interface {
	Send(ctx context.Context, e envelope.Envelope) error
	SendRaw(ctx context.Context, stage domain.Stage, dlq bool, body string, attributes map[string]string) error
	SetVisibility(ctx context.Context, stage domain.Stage, receipt string, seconds int32) error
}

// Runtime runs one stage.
type Runtime struct {
	Stage       domain.Stage
	Jobs        Jobs
	Queues      Queues
	Processor   Processor
	Lease       time.Duration  // the queue's visibility timeout
	MaxAttempts int            // per-stage budget, first attempt included
	Backoff     backoff.Policy // retry delays
	Log         *slog.Logger
	Metrics     *obs.Metrics
	// Sanitize removes secrets from error text before it is stored or
	// dead-lettered (the redaction rules plus the log masker).
	Sanitize func(string) string
	Now      job.Clock // the one time source for writes; nil: the system clock
	// Skew is the clock-skew budget between hosts (CLOCK_SKEW_SECONDS):
	// another owner's lease expires only once it ended that long ago here.
	Skew time.Duration
	// AfterDeadLetter, best effort, is told of a dead-lettered job (Helix
	// Swarm's {fail} callback).
	AfterDeadLetter func(ctx context.Context, j *job.Job, class failure.Class)
	// QueueVisibility is the queue's visibility timeout when longer than
	// Lease (AWS wants at least the function's timeout, and the llm function
	// may outlive a lease): a claimed message's visibility is cut to Lease at
	// once, so a crashed worker's message returns within the lease.
	QueueVisibility time.Duration
	// Redeliver (notify) runs for a succeeded job whose message asks for a
	// redelivery: it delivers the pending rows under their existing keys;
	// the job is not reopened, the outcome goes into its history.
	Redeliver Processor
	// Defer (notify: store.Defer) gives each attempt a context whose rows
	// the stage's completion writes in the same request.
	Defer func(context.Context) context.Context
	tick  func(d time.Duration) (<-chan time.Time, func()) // tests' heartbeat ticker; nil: time.NewTicker
}

func (r *Runtime) now() time.Time { return r.Now.Now() }

// lease returns owner's lease as of now.
func (r *Runtime) lease(owner string) job.Lease {
	return job.Lease{Owner: owner, Now: r.now(), TTL: r.Lease, Skew: r.Skew}
}

// sanitizeAbout passes text about err through package sanitize (upstream
// text in err's chain withheld), then the function's own policy.
func (r *Runtime) sanitizeAbout(err error, s string) string {
	s = sanitize.About(err, s)
	if r.Sanitize != nil {
		s = r.Sanitize(s)
	}
	const max = 4096
	if len(s) > max {
		s = s[:max] + "…[truncated]"
	}
	return s
}

// Handle is the SQS handler: records are processed concurrently, each under
// its own lease; failed ones are reported in BatchItemFailures.
func (r *Runtime) Handle(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	var (
		mu sync.Mutex
		// An empty list, not null: some emulators mishandle null.
		resp = events.SQSEventResponse{BatchItemFailures: []events.SQSBatchItemFailure{}}
		wg   sync.WaitGroup
	)
	for _, rec := range ev.Records {
		wg.Go(func() {
			if r.handleRecord(ctx, rec) == leave {
				mu.Lock()
				resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: rec.MessageId})
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return resp, nil
}

type outcome int

const (
	ack   outcome = iota // delete the message
	leave                // leave it in the queue: it returns when its visibility ends
)

func (r *Runtime) handleRecord(ctx context.Context, rec events.SQSMessage) (out outcome) {
	ctx = obs.WithAttrs(ctx, slog.String("message_id", rec.MessageId), slog.String("stage", string(r.Stage)))
	defer func() {
		if p := recover(); p != nil {
			r.Log.ErrorContext(ctx, "stage runtime panicked", "panic", fmt.Sprint(p), "stack", r.sanitizeAbout(nil, string(debug.Stack())))
			out = leave
		}
	}()

	env, err := envelope.Decode(rec.Body)
	if err == nil && env.Stage != r.Stage {
		err = failure.Errorf(failure.SchemaInvalid, "envelope for stage %s arrived on the %s queue", env.Stage, r.Stage)
	}
	if err != nil {
		return r.rejectMalformed(ctx, rec, err)
	}
	ctx = obs.WithAttrs(ctx, slog.String("job_id", env.JobID), slog.String("trace_id", env.TraceID))
	owner := rec.MessageId + "#" + rec.Attributes["ApproximateReceiveCount"]

	if err := r.applyReplay(ctx, env, rec.MessageId); err != nil {
		r.Log.ErrorContext(ctx, "replay bookkeeping failed; will retry", "err", err)
		return leave
	}

	lease := r.lease(owner)
	j, err := r.Jobs.Claim(ctx, env.JobID, r.Stage, lease, r.MaxAttempts)
	var refused *job.ClaimRefused
	switch {
	case errors.As(err, &refused):
		return r.refused(ctx, env, rec, refused)
	case errors.Is(err, job.ErrNotFound):
		return r.rejectMalformed(ctx, rec, failure.Errorf(failure.NotFound, "job %s does not exist", env.JobID))
	case err != nil:
		r.Log.WarnContext(ctx, "claim failed; the message returns after its visibility timeout", "err", err, "error_class", failure.Classify(err))
		return leave
	}
	attempts := j.StageRecord(r.Stage).Attempts
	r.Log.InfoContext(ctx, "stage claimed", "attempt", attempts, "max_attempts", r.MaxAttempts, "owner", owner)

	if r.QueueVisibility > r.Lease {
		if err := r.Queues.SetVisibility(ctx, r.Stage, rec.ReceiptHandle, backoff.Seconds(r.Lease)); err != nil {
			// Not fatal: the heartbeat retries.
			r.Log.WarnContext(ctx, "shortening the message's visibility to the lease failed", "err", err)
		}
	}
	if r.Defer != nil {
		ctx = r.Defer(ctx)
	}
	workCtx, stop := r.heartbeat(ctx, env.JobID, rec.ReceiptHandle, owner)
	result, stack, perr := r.process(workCtx, r.Processor, j)
	lost := stop()
	if lost != nil {
		r.Log.WarnContext(ctx, "lease lost during work; results discarded", "err", lost)
		r.Metrics.Put("LeaseLost", 1, obs.Count, map[string]string{"Stage": string(r.Stage)})
		return leave
	}

	lease.Now = r.now()
	if perr == nil {
		return r.complete(ctx, env, rec, j, lease, result)
	}
	return r.fail(ctx, env, rec, j, lease, perr, stack)
}

// applyReplay turns a redriven dead letter or a restart request into a state
// the claim accepts; a replay already made is left to the claim.
func (r *Runtime) applyReplay(ctx context.Context, env envelope.Envelope, messageID string) error {
	now := r.now()
	var err error
	switch {
	case env.Replay != nil && env.Replay.Mode == envelope.ModeFullRestart:
		_, err = r.Jobs.Restart(ctx, env.JobID, env.Replay.RequestedBy, messageID, now, 2*r.Lease)
		if err == nil {
			r.Log.InfoContext(ctx, "job restarted from fetch", "requested_by", env.Replay.RequestedBy)
		}
	case env.DeadLetter != nil:
		_, err = r.Jobs.Replay(ctx, env.JobID, r.Stage, env.DeadLetter.ID, env.DeadLetter.ErrorClass, now, 2*r.Lease)
		if err == nil {
			r.Log.InfoContext(ctx, "dead letter replayed with a fresh budget", "dead_letter_id", env.DeadLetter.ID, "error_class", env.DeadLetter.ErrorClass)
			r.Metrics.Put("Replays", 1, obs.Count, map[string]string{"Stage": string(r.Stage)})
		}
	default:
		return nil
	}
	if errors.Is(err, job.ErrNotReplayable) || errors.Is(err, job.ErrNotFound) {
		return nil
	}
	return err
}

func (r *Runtime) refused(ctx context.Context, env envelope.Envelope, rec events.SQSMessage, refused *job.ClaimRefused) outcome {
	j := refused.Job
	srec := j.StageRecord(r.Stage)
	switch refused.Reason {
	case job.RefusedStageDone:
		// A completed stage's message returned: if the completion's answer
		// was lost, the next stage's message may not have been sent; resend
		// it while that stage is unclaimed (its claim makes duplicates harmless).
		if next, ok := r.Stage.Next(); ok && j.Stage == next && j.State == job.Queued {
			r.sendNext(ctx, env, j, next)
		}
		r.Log.InfoContext(ctx, "duplicate message of a completed stage acknowledged", "reason", refused.Reason, "job_state", j.State, "job_stage", j.Stage)
		return ack
	case job.RefusedSucceeded, job.RefusedStaleStage:
		if refused.Reason == job.RefusedSucceeded && env.Replay != nil && env.Replay.Mode == envelope.ModeRedeliver {
			return r.redeliver(ctx, env, rec, j)
		}
		r.Log.InfoContext(ctx, "duplicate or stale message acknowledged", "reason", refused.Reason, "job_state", j.State, "job_stage", j.Stage)
		return ack
	case job.RefusedDeadLettered:
		if srec.DLQPending && srec.DeadLetter != "" && j.Stage == r.Stage {
			// The stage was dead-lettered but the DLQ send was interrupted: finish it.
			if err := r.sendDeadLetter(ctx, j.ID, srec.LastErrorClass, srec.DeadLetter); err != nil {
				r.Log.ErrorContext(ctx, "resending dead letter failed", "err", err)
				return leave
			}
			r.markDeadLetterSent(ctx, j.ID, srec.DeadLetterID)
		}
		return ack
	case job.RefusedLeaseHeld:
		// Another delivery is being worked on: look again when its lease ends.
		if exp, err := job.ParseTime(srec.LeaseExpiresAt); err == nil {
			if err := r.Queues.SetVisibility(ctx, r.Stage, rec.ReceiptHandle, backoff.Seconds(exp.Sub(r.now())+r.Skew+time.Second)); err != nil {
				r.Log.WarnContext(ctx, "delaying a message whose lease is held failed; it comes back at its visibility timeout", "err", err)
			}
		}
		return leave
	case job.RefusedBudget:
		// Every attempt ended without a verdict: workers crashed or timed out.
		class := cmp.Or(srec.LastErrorClass, failure.InternalBug)
		err := failure.Errorf(class, "attempt budget of %d exhausted: the last attempt's worker crashed or timed out without reporting", r.MaxAttempts)
		return r.deadLetter(ctx, env, rec, j, r.lease(""), class, err, "")
	}
	r.Log.WarnContext(ctx, "claim refused; the message returns after its visibility timeout", "reason", refused.Reason)
	return leave
}

// redeliver runs Redeliver for succeeded job j (rule OB-5) under the rows'
// existing outbox keys (the outbox makes it at most once) and records who
// asked and why in the history. A retryable failure comes back with
// backoff; any other is recorded and counted (RedeliveryFailed, alarmed).
func (r *Runtime) redeliver(ctx context.Context, env envelope.Envelope, rec events.SQSMessage, j *job.Job) outcome {
	actor, note := env.Replay.RequestedBy, env.Replay.Note
	if strings.TrimSpace(actor) == "" {
		actor = "unknown"
	}
	if strings.TrimSpace(note) == "" {
		note = "no note"
	}
	record := func(action, detail string) {
		if err := r.Jobs.RecordOperator(context.WithoutCancel(ctx), j.ID, action, actor, detail, r.now()); err != nil {
			r.Log.WarnContext(ctx, "recording the redelivery in the job history failed", "err", err)
		}
	}
	if r.Redeliver == nil {
		r.Log.ErrorContext(ctx, "redelivery asked of a stage that does not deliver", "requested_by", actor)
		r.Metrics.Put("RedeliveryFailed", 1, obs.Count, map[string]string{"Stage": string(r.Stage)})
		record("redelivery_failed", "the "+string(r.Stage)+" stage does not deliver; "+note)
		return ack
	}
	res, _, err := r.process(ctx, r.Redeliver, j)
	if err != nil {
		class := failure.Classify(err)
		reason := r.sanitizeAbout(err, err.Error())
		if class.Retryable() {
			delay := r.Backoff.Delay(receiveCount(rec), failure.RetryAfter(err))
			if verr := r.Queues.SetVisibility(ctx, r.Stage, rec.ReceiptHandle, backoff.Seconds(delay)); verr != nil {
				r.Log.WarnContext(ctx, "delaying the redelivery retry failed; it comes back at its visibility timeout", "err", verr)
			}
			r.Log.WarnContext(ctx, "redelivery failed; retrying", "error_class", class, "err", reason)
			return leave
		}
		r.Log.ErrorContext(ctx, "redelivery failed", "error_class", class, "err", reason)
		r.Metrics.Put("RedeliveryFailed", 1, obs.Count, map[string]string{"Stage": string(r.Stage)})
		record("redelivery_failed", fmt.Sprintf("%s: %s; %s", class, reason, note))
		return ack
	}
	r.Log.InfoContext(ctx, "redelivered for a succeeded job", "requested_by", actor, "detail", res.Detail)
	r.Metrics.Put("Redelivered", 1, obs.Count, map[string]string{"Stage": string(r.Stage)})
	record("redelivered", res.Detail+"; "+note)
	return ack
}

// markDeadLetterSent clears the kept DLQ body; a failure only keeps it longer.
func (r *Runtime) markDeadLetterSent(ctx context.Context, jobID, dlID string) {
	if err := r.Jobs.MarkDeadLetterSent(context.WithoutCancel(ctx), jobID, r.Stage, dlID, r.now()); err != nil {
		r.Log.WarnContext(ctx, "clearing the sent dead letter failed; a redelivery may resend it", "err", err, "dead_letter_id", dlID)
	}
}

// heartbeatEvery is the heartbeat's period: a third of the lease, so two
// renewals can fail (or be late by a skew budget) before the lease ends.
func heartbeatEvery(lease time.Duration) time.Duration { return lease / 3 }

func (r *Runtime) ticker(d time.Duration) (<-chan time.Time, func()) {
	if r.tick != nil {
		return r.tick(d)
	}
	t := time.NewTicker(d)
	return t.C, t.Stop
}

// heartbeat renews the lease until stop; a failed renewal cancels the
// returned context, and stop returns the cause.
func (r *Runtime) heartbeat(ctx context.Context, jobID, receipt, owner string) (context.Context, func() error) {
	work, cancel := context.WithCancelCause(ctx)
	beat, stopBeat := context.WithCancel(work) // ends with the work or at stop
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		ticks, stopTicker := r.ticker(heartbeatEvery(r.Lease))
		defer stopTicker()
		for {
			select {
			case <-beat.Done():
				return
			case <-ticks:
				if err := r.Queues.SetVisibility(work, r.Stage, receipt, backoff.Seconds(r.Lease)); err != nil {
					cancel(fmt.Errorf("extend message visibility: %w: %w", job.ErrLeaseLost, err))
					return
				}
				if err := r.Jobs.Renew(work, jobID, r.Stage, job.Lease{Owner: owner, Now: r.now(), TTL: r.Lease}); err != nil {
					cancel(fmt.Errorf("renew stage lease: %w", err))
					return
				}
			}
		}
	}()
	return work, func() error {
		stopBeat()
		<-finished
		cause := context.Cause(work)
		cancel(nil)
		if cause != nil && !errors.Is(cause, context.Canceled) {
			return cause
		}
		return nil
	}
}

// process runs proc, turning a panic into an INTERNAL_BUG error.
func (r *Runtime) process(ctx context.Context, proc Processor, j *job.Job) (res job.Result, stack string, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = failure.Errorf(failure.InternalBug, "panic: %v", p)
			stack = string(debug.Stack())
		}
	}()
	res, err = proc.Process(ctx, j)
	return res, "", err
}

// completeAttempts bounds the writes of a completion whose answer was lost to
// a transient error; each carries the same write token (the lease owner).
const completeAttempts = 3

func (r *Runtime) complete(ctx context.Context, env envelope.Envelope, rec events.SQSMessage, j *job.Job, lease job.Lease, res job.Result) outcome {
	var (
		done *job.Job
		err  error
	)
	for i := 0; i < completeAttempts; i++ {
		done, err = r.Jobs.Complete(context.WithoutCancel(ctx), j.ID, r.Stage, lease, res, 2*r.Lease)
		if err == nil || !failure.Classify(err).Retryable() || errors.Is(err, job.ErrLeaseLost) {
			break
		}
		r.Log.WarnContext(ctx, "recording stage completion failed; retrying the same write", "err", err, "error_class", failure.Classify(err))
	}
	if errors.Is(err, job.ErrLeaseLost) {
		r.Log.WarnContext(ctx, "stage finished but its lease was taken over; not recording", "err", err)
		return leave
	}
	if err != nil {
		// Done but not recorded: stages are idempotent, so an ordinary failure.
		r.Log.ErrorContext(ctx, "recording stage completion failed", "err", err, "error_class", failure.Classify(err))
		return r.fail(ctx, env, rec, j, lease, err, "")
	}
	r.Metrics.Put("StageSucceeded", 1, obs.Count, map[string]string{"Stage": string(r.Stage)})
	if next, ok := r.Stage.Next(); ok {
		r.sendNext(ctx, env, done, next)
		r.Log.InfoContext(ctx, "stage completed", "next_stage", next)
	} else {
		r.Log.InfoContext(ctx, "job succeeded", "state", done.State)
	}
	return ack
}

// sendNext enqueues the next stage of a job whose stage completed.
func (r *Runtime) sendNext(ctx context.Context, env envelope.Envelope, j *job.Job, next domain.Stage) {
	if err := r.Queues.Send(context.WithoutCancel(ctx), envelope.ForJob(j, next, r.now())); err != nil {
		r.Log.ErrorContext(ctx, "enqueueing the next stage failed; the sweeper re-enqueues it", "next_stage", next, "err", err)
	}
}

func (r *Runtime) fail(ctx context.Context, env envelope.Envelope, rec events.SQSMessage, j *job.Job, lease job.Lease, perr error, stack string) outcome {
	class := failure.Classify(perr)
	if class == failure.LeaseLost {
		return leave
	}
	attempts := j.StageRecord(r.Stage).Attempts
	if class.Retryable() && attempts < r.MaxAttempts {
		delay := r.Backoff.Delay(attempts, failure.RetryAfter(perr))
		_, err := r.Jobs.Retry(ctx, j.ID, r.Stage, lease, job.FailureInfo{Class: class, Message: r.sanitizeAbout(perr, perr.Error())}, delay)
		if err != nil {
			r.Log.WarnContext(ctx, "recording the retry failed", "err", err)
			return leave
		}
		if err := r.Queues.SetVisibility(ctx, r.Stage, rec.ReceiptHandle, backoff.Seconds(delay)); err != nil {
			r.Log.WarnContext(ctx, "delaying the retry failed; it comes back when the lease ends", "err", err)
		}
		r.Log.WarnContext(ctx, "stage failed; retry scheduled", "error_class", class, "attempt", attempts, "delay_ms", delay.Milliseconds(), "err", r.sanitizeAbout(perr, perr.Error()))
		r.Metrics.Put("StageRetried", 1, obs.Count, map[string]string{"Stage": string(r.Stage), "ErrorClass": string(class)})
		return leave
	}
	return r.deadLetter(ctx, env, rec, j, lease, class, perr, stack)
}

// deadLetter records the failure, sends the envelope plus its dead_letter
// block to the stage DLQ, and acknowledges the message.
func (r *Runtime) deadLetter(ctx context.Context, env envelope.Envelope, rec events.SQSMessage, j *job.Job, lease job.Lease, class failure.Class, perr error, stack string) outcome {
	now := job.FormatTime(lease.Now)
	srec := j.StageRecord(r.Stage)
	first := cmp.Or(srec.FirstFailureAt, now)
	escalated := !class.Retryable() && srec.ReplayedClass == class
	dl := envelope.DeadLetter{
		ID: uuid.NewString(), ErrorClass: class, Retryable: class.Retryable(),
		Reason:    r.sanitizeAbout(perr, perr.Error()),
		LastStack: r.sanitizeAbout(perr, errorChain(perr)+stack),
		SanitizedContext: map[string]any{
			"message_id": rec.MessageId, "receive_count": receiveCount(rec), "request_id": requestID(ctx),
			"trace_id": env.TraceID, "job_id": j.ID, "changelist_id": j.Changelist, "review_version": j.ReviewVersion,
			"stage": string(r.Stage), "attempts": srec.Attempts, "max_attempts": r.MaxAttempts,
			"upstream_code": failure.UpstreamCode(perr), "body_sha256": envelope.Hash(rec.Body), "replays": srec.Replays,
		},
		Stage: r.Stage, Attempts: srec.Attempts, FirstFailureAt: first, LastFailureAt: now,
		Escalated: escalated, ReplayCount: srec.Replays,
	}
	out := env
	out.DeadLetter, out.Replay, out.Attempt, out.SentAt = &dl, nil, srec.Attempts, now
	body, err := out.Encode()
	if err != nil {
		r.Log.ErrorContext(ctx, "encoding dead letter failed", "err", err)
		return leave
	}
	failed, err := r.Jobs.DeadLetter(ctx, j.ID, r.Stage, lease, job.FailureInfo{Class: class, Message: dl.Reason}, dl.ID, body)
	if err != nil {
		r.Log.WarnContext(ctx, "recording the dead letter failed", "err", err)
		return leave
	}
	if err := r.sendDeadLetter(ctx, j.ID, class, body); err != nil {
		// The job keeps the body with dlq_pending; the redelivered message resends it.
		r.Log.ErrorContext(ctx, "sending to the dead-letter queue failed; will resend", "err", err)
		return leave
	}
	r.markDeadLetterSent(ctx, j.ID, dl.ID)
	r.Log.ErrorContext(ctx, "stage dead-lettered", "error_class", class, "attempts", srec.Attempts, "escalated", escalated, "dead_letter_id", dl.ID, "reason", dl.Reason)
	r.Metrics.Put("DeadLettered", 1, obs.Count, map[string]string{"Stage": string(r.Stage), "ErrorClass": string(class)})
	if escalated {
		r.Metrics.Put("Escalations", 1, obs.Count, map[string]string{"Stage": string(r.Stage), "ErrorClass": string(class)})
	}
	if r.AfterDeadLetter != nil && failed != nil {
		r.AfterDeadLetter(ctx, failed, class)
	}
	return ack
}

// sendDeadLetter sends the body as the job keeps it (a resend is
// byte-identical), with attributes to filter on.
func (r *Runtime) sendDeadLetter(ctx context.Context, jobID string, class failure.Class, body string) error {
	return r.Queues.SendRaw(ctx, r.Stage, true, body, map[string]string{"job_id": jobID, "stage": string(r.Stage), "error_class": string(class)})
}

// rejectMalformed moves an unusable message to the DLQ unchanged, with
// diagnostics in its attributes, and acknowledges it.
func (r *Runtime) rejectMalformed(ctx context.Context, rec events.SQSMessage, err error) outcome {
	class := failure.Classify(err)
	now := job.FormatTime(r.now())
	attrs := map[string]string{
		"error_class": string(class), "reason": r.sanitizeAbout(err, err.Error()), "stage": string(r.Stage),
		"first_failure_at": now, "last_failure_at": now, "source_message_id": rec.MessageId, "body_sha256": envelope.Hash(rec.Body),
	}
	if serr := r.Queues.SendRaw(ctx, r.Stage, true, rec.Body, attrs); serr != nil {
		r.Log.ErrorContext(ctx, "moving a malformed message to the DLQ failed; will retry", "err", serr)
		return leave
	}
	r.Log.ErrorContext(ctx, "malformed message dead-lettered", "error_class", class, "reason", attrs["reason"], "body_sha256", attrs["body_sha256"])
	r.Metrics.Put("DeadLettered", 1, obs.Count, map[string]string{"Stage": string(r.Stage), "ErrorClass": string(class)})
	return ack
}

func errorChain(err error) string {
	var b strings.Builder
	for i := 0; err != nil; i++ {
		fmt.Fprintf(&b, "%d: %T: %s\n", i, err, err.Error())
		err = errors.Unwrap(err)
	}
	return b.String()
}

func receiveCount(rec events.SQSMessage) int {
	n, _ := strconv.Atoi(rec.Attributes["ApproximateReceiveCount"])
	return n
}

func requestID(ctx context.Context) string {
	if lc, ok := lambdacontext.FromContext(ctx); ok {
		return lc.AwsRequestID
	}
	return ""
}
