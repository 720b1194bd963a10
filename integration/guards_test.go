//go:build integration

package integration

// Guards no other test reaches: each test fails if its guard is switched off.

import (
	"bytes"
	"context"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/google/uuid"

	smtpstandin "github.com/criticizer/criticizer/internal/standin/smtp"
	"github.com/criticizer/criticizer/shared/artifacts"
	"github.com/criticizer/criticizer/shared/decide"
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/envelope"
	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/notifystage"
	"github.com/criticizer/criticizer/shared/secrets"
	"github.com/criticizer/criticizer/shared/smtpmail"
)

func redactedStore() *artifacts.Store {
	return artifacts.New(s3.NewFromConfig(env.local.AWS, func(o *s3.Options) { o.UsePathStyle = true }), env.out["RedactedBucketName"])
}

// jobWithArtifacts stores a job whose earlier stages are done, at stage
// `at`, with the given artifact keys and recipients.
func jobWithArtifacts(t *testing.T, at domain.Stage, a job.Artifacts, recipients []string) *job.Job {
	t.Helper()
	j := createJob(t, changeSeq.Add(1), nil)
	set := "SET #stage = :at, artifacts = :a, recipients = :r"
	names := map[string]string{"#stage": "stage", "#st": "status"}
	vals := map[string]ddbtypes.AttributeValue{":at": &ddbtypes.AttributeValueMemberS{Value: string(at)}, ":d": &ddbtypes.AttributeValueMemberS{Value: "done"}}
	art := map[string]ddbtypes.AttributeValue{}
	for k, v := range map[string]string{"raw": a.Raw, "redacted": a.Redacted, "result": a.Result} {
		if v != "" {
			art[k] = &ddbtypes.AttributeValueMemberS{Value: v}
		}
	}
	vals[":a"] = &ddbtypes.AttributeValueMemberM{Value: art}
	rl := &ddbtypes.AttributeValueMemberL{}
	for _, r := range recipients {
		rl.Value = append(rl.Value, &ddbtypes.AttributeValueMemberS{Value: r})
	}
	vals[":r"] = rl
	for _, s := range domain.Stages {
		if s == at {
			break
		}
		names["#"+string(s)] = string(s)
		set += ", stages.#" + string(s) + ".#st = :d"
	}
	_, err := env.ddb.UpdateItem(context.Background(), &dynamodb.UpdateItemInput{TableName: aws.String(env.out["JobsTableName"]),
		Key:              map[string]ddbtypes.AttributeValue{"pk": &ddbtypes.AttributeValueMemberS{Value: "JOB#" + j.ID}, "sk": &ddbtypes.AttributeValueMemberS{Value: "JOB"}},
		UpdateExpression: aws.String(set), ExpressionAttributeNames: names, ExpressionAttributeValues: vals})
	if err != nil {
		t.Fatal(err)
	}
	got, err := env.jobs.Get(context.Background(), j.ID)
	if err != nil {
		t.Fatal(err)
	}
	if at == domain.StageNotify && a.Result != "" {
		decideAsTheLLMStage(t, redactedStore(), got)
	}
	return got
}

// decideAsTheLLMStage stores the job's decided review (shared/decide) from
// its result and changeset, as the llm stage does before notify runs.
func decideAsTheLLMStage(t *testing.T, arts *artifacts.Store, j *job.Job) {
	t.Helper()
	ctx := context.Background()
	var review domain.ReviewResult
	var cs domain.Changeset
	if err := arts.GetJSON(ctx, j.Artifacts.Result, &review); err != nil {
		t.Fatal(err)
	}
	if err := arts.GetJSON(ctx, j.Artifacts.Redacted, &cs); err != nil {
		t.Fatal(err)
	}
	if err := (&decide.Decider{Artifacts: arts}).Decide(ctx, j, review, &cs); err != nil {
		t.Fatal(err)
	}
}

// The llm stage scans the prompt once more before the LLM call. A
// redacted artifact that still holds a secret (redaction bypassed or
// broken) must be blocked there: POLICY_REJECTED, and no request to the
// provider carries it.
func TestPreSubmitGuardBlocksASecretThatEscapedRedaction(t *testing.T) {
	const leaked = "AKIAQX7N3PLV2KD5RTWE" // the planted fake key id
	marker := "[guard test " + uuid.NewString() + "]"
	cs := domain.Changeset{Changelist: 1, User: "alice", Client: "alice-ws", Status: "submitted", Description: "Add the uploader\n" + marker,
		Files: []domain.FileChange{{DepotPath: "//depot/projectA/src/upload.go", Action: "add", Type: "text", Rev: 1,
			Diff: "--- /dev/null\n+++ //depot/projectA/src/upload.go#1\n@@ -0,0 +1,2 @@\n+package upload\n+const awsKeyID = \"" + leaked + "\"\n"}}}
	key := artifacts.Key(uuid.NewString(), "redacted-changeset.json")
	if err := redactedStore().PutJSON(context.Background(), key, cs); err != nil {
		t.Fatal(err)
	}
	j := jobWithArtifacts(t, domain.StageLLM, job.Artifacts{Redacted: key}, []string{"alice@example.com"})
	if err := env.queues.Send(context.Background(), envelope.Envelope{V: 1, JobID: j.ID, Changelist: j.Changelist, ReviewVersion: 1, Stage: domain.StageLLM, TraceID: "guard"}); err != nil {
		t.Fatal(err)
	}
	// A policy rejection dead-letters on the first attempt; a sweep at worst.
	done := waitJob(t, j.ID, 2*env.lease+sweepEvery, "settled", func(j *job.Job) bool { return j.Terminal() })
	for _, req := range env.llm.Requests() {
		for _, m := range req.Messages {
			if strings.Contains(m.Content, marker) || strings.Contains(m.Content, leaked) {
				t.Fatal("the prompt with the unredacted secret reached the LLM provider")
			}
		}
	}
	if done.State != job.Failed {
		t.Fatalf("job %s, want failed by the pre-submit guard; history %s", done.State, historyOf(done))
	}
	it := awaitDLQ(t, domain.StageLLM, forJob(j.ID), 2*env.lease)
	if dl := it.Env.DeadLetter; dl.ErrorClass != failure.PolicyRejected || dl.Attempts != 1 {
		t.Fatalf("dead letter %+v, want POLICY_REJECTED on the first attempt", dl)
	}
	assertNoSecrets(t, "the guard's dead letter", it.Body)
}

// Without provider evidence there is no way to learn whether a send that may
// have happened did: the notify stage must dead-letter the row as
// DELIVERY_UNCONFIRMED for an operator, never resend blindly. Run
// in-process, since the deployed stack always has the stand-in's log.
func TestUncertainSendWithoutEvidenceIsNotResent(t *testing.T) {
	ctx := context.Background()
	_, donorID := submit(t, 12345) // for its review artifacts
	donor := waitJob(t, donorID, settleTime(1), "succeeded", succeeded)
	rcpt := "unconfirmed-" + strconv.FormatInt(time.Now().UnixNano(), 36) + "@example.com"
	j := jobWithArtifacts(t, domain.StageNotify, job.Artifacts{Redacted: donor.Artifacts.Redacted, Result: donor.Artifacts.Result}, []string{rcpt})

	user, pass := smtpCredentials(t)
	host, port, _ := net.SplitHostPort(env.smtp.Addr())
	p, _ := strconv.Atoi(port)
	sender, err := smtpmail.New(smtpmail.Config{Host: host, Port: p, From: "criticizer@localhost", TLS: smtpmail.TLSMode("none"),
		Username: user, Password: pass, Timeout: 2 * env.lease}, env.quiet)
	if err != nil {
		t.Fatal(err)
	}
	n := &notifystage.Notify{Outbox: env.outbox, Secret: env.deliveryKey, Artifacts: redactedStore(), Email: smtpmail.NewChannel(sender.Send, nil), From: "criticizer@localhost", Log: env.quiet} // no evidence

	if err := env.smtp.QueueFault(smtpstandin.Fault{Stage: smtpstandin.StageData, Drop: true}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(env.smtp.Reset)
	url := scratch(t)
	rt := runtime(url, 30*time.Second, n, &bytes.Buffer{})
	to := func() int {
		c := 0
		for _, m := range env.smtp.Messages() {
			for _, a := range m.To {
				if strings.EqualFold(a, rcpt) {
					c++
				}
			}
		}
		return c
	}
	// Attempt 1: the server stores the message and drops the connection.
	if _, err := rt.Handle(ctx, events.SQSEvent{Records: []events.SQSMessage{delivered(t, url, notifyEnvelope(j))}}); err != nil {
		t.Fatal(err)
	}
	if c := to(); c != 1 {
		t.Fatalf("%d messages after the dropped send, want the 1 the server kept", c)
	}
	// Attempt 2 (the redelivery): nothing can confirm the send.
	if _, err := rt.Handle(ctx, events.SQSEvent{Records: []events.SQSMessage{delivered(t, url, notifyEnvelope(j))}}); err != nil {
		t.Fatal(err)
	}
	if c := to(); c != 1 {
		t.Fatalf("%d messages to %s: the uncertain send was repeated blindly", c, rcpt)
	}
	got, err := env.jobs.Get(ctx, j.ID)
	if err != nil {
		t.Fatal(err)
	}
	rec := got.StageRecord(domain.StageNotify)
	if got.State != job.Failed || rec.LastErrorClass != failure.DeliveryUnconfirmed {
		t.Fatalf("job %s, notify %+v: want failed with DELIVERY_UNCONFIRMED; history %s", got.State, rec, historyOf(got))
	}
	it := awaitDLQ(t, domain.StageNotify, forJob(j.ID), 2*env.lease)
	if it.Env.DeadLetter.ErrorClass != failure.DeliveryUnconfirmed {
		t.Fatalf("dead letter %+v, want DELIVERY_UNCONFIRMED", it.Env.DeadLetter)
	}
}

// smtpCredentials reads the stack's SMTP login from Secrets Manager.
func smtpCredentials(t *testing.T) (user, pass string) {
	t.Helper()
	sm := secrets.New(env.sm, time.Minute)
	var err error
	if user, err = sm.Field(context.Background(), env.out["SmtpSecretArn"], "username"); err != nil {
		t.Fatal(err)
	}
	if pass, err = sm.Field(context.Background(), env.out["SmtpSecretArn"], "password"); err != nil {
		t.Fatal(err)
	}
	return user, pass
}
