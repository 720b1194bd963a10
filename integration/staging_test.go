//go:build integration

package integration

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/criticizer/criticizer/internal/devstack"
	"github.com/criticizer/criticizer/shared/store"
)

// TestStagingShapedReview deploys the staging configuration of cdk.json (its
// lease and timeouts, a base-URL LLM endpoint, the p4 layer, the alarm topic
// it creates, the redaction policy, SES as the e-mail provider) to a second emulator and runs a full
// review through it, so a setting that only works in `local` fails here.
// Only the stand-ins' addresses and the emulator deviations listed in
// devstack.stagingOverrides differ from what `make deploy ENV=staging` ships.
func TestStagingShapedReview(t *testing.T) {
	if testing.Short() {
		t.Skip("deploys a second stack")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	l, err := devstack.StartLocal(ctx, devstack.LocalOptions{Shape: "staging"})
	if err != nil {
		t.Fatalf("staging-shaped deploy: %v", err)
	}
	defer l.Close()
	if l.StackName != "Criticizer-staging" || !strings.HasPrefix(l.Outputs["AlarmTopicArn"], "arn:") {
		t.Fatalf("stack %s, alarm topic %q", l.StackName, l.Outputs["AlarmTopicArn"])
	}

	// The helpers read the shared env; point it at this stack for the test
	// (integration tests run sequentially) and restore it after.
	saved := env
	defer func() { env = saved }()
	env.local, env.out, env.apiURL, env.depot = l, l.Outputs, l.APIURL, l.Depot
	env.llm, env.smtp, env.webhookKey, env.secrets = l.LLM, l.SMTP, l.WebhookKey, l.Secrets
	env.ddb = dynamodb.NewFromConfig(l.AWS)
	env.jobs = store.New(env.ddb, l.Outputs["JobsTableName"])

	cl := newChange(t, 12345)
	resp := postWebhook(t, map[string]any{"changelist_id": cl, "review_version": 1, "idempotency_key": uniqueKey(t),
		"recipients": []string{"reviewers@studio.test"}, "source": "p4-trigger"}) // a recipient domain staging's sample allows (settings.Samples)
	if resp.Status != http.StatusAccepted {
		t.Fatalf("POST status %d, body %s", resp.Status, resp.Body)
	}
	j := waitJob(t, resp.Decoded["job_id"].(string), 3*time.Minute, "succeeded", succeeded)
	if j.FindingCount == 0 {
		t.Error("the staging-shaped review found nothing")
	}
	// Staging sends through SES (cdk.json): the emulator's SES accepts the
	// message and relays it to the SMTP stand-in without logging in, after
	// the SendEmail call returned.
	// One e-mail: the reviewers. The change's author (alice@example.com in
	// the p4 stand-in's fixtures) is outside staging's recipient domains
	// (the declared sample, studio.test, standing in for the checked-in
	// placeholder synth refuses), so the recipient policy leaves the author
	// out, as it would in staging.
	mails := waitMails(t, cl, 1, 1, 30*time.Second)
	if len(mails) != 1 || len(mails[0].To) != 1 || mails[0].To[0] != "reviewers@studio.test" {
		t.Errorf("e-mails %v, want one to reviewers@studio.test", mails)
	}
	for _, m := range mails {
		if m.Username != "" {
			t.Errorf("e-mail to %v arrived over an SMTP login (%s), not through SES", m.To, m.Username)
		}
		assertNoSecrets(t, "e-mail", string(m.Raw))
	}
}
