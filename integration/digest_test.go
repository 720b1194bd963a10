//go:build integration

package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	smtpstandin "github.com/criticizer/criticizer/internal/standin/smtp"
	"github.com/criticizer/criticizer/shared/digest"
	"github.com/criticizer/criticizer/shared/outbox"
	"github.com/criticizer/criticizer/shared/outcome"
	"github.com/criticizer/criticizer/shared/swarm"
	"github.com/criticizer/criticizer/shared/weekly"
)

// TestWeeklyDigest: a week of reviews under //depot/projectA/..., whose two
// owners (cdk.json local: lead@ and quiet@example.com) are one opted in and
// one not; a finding is addressed in Swarm and its fate read. The deployed
// digest function, run twice for the week (a retried schedule), e-mails the
// opted-in owner exactly once, through the real SMTP path, with the reviews,
// the findings by severity and the acceptance; the other owner gets nothing.
func TestWeeklyDigest(t *testing.T) {
	ctx := context.Background()
	dir := fmt.Sprintf("//depot/projectA/digest%d/", time.Now().UnixNano()%1e6)
	cl := reviewVersionChange(t, map[string]string{dir + "copy.c": copyV1, dir + "log.c": logC})
	review := cl + 1
	runVersion(t, review, cl, 1)
	for _, c := range ourComments(t, review) {
		if c.Context != nil && strings.HasSuffix(c.Context.File, "copy.c") {
			if err := env.local.Swarm.Address(c.ID); err != nil {
				t.Fatal(err)
			}
		}
	}
	// The reactions, read as the sweeper's pass reads them a day on.
	table := env.out["JobsTableName"]
	st := outcome.NewStore(env.ddb, table)
	client := &swarm.Client{BaseURL: env.local.Swarm.URL(), Credentials: func(context.Context, bool) (swarm.Credentials, error) {
		return swarm.Credentials{User: "criticizer", Ticket: env.local.Secrets["Swarm API ticket"]}, nil
	}}
	now := time.Now().Add(25 * time.Hour)
	pass := &outcome.Pass{Store: st, Reader: &outcome.Reader{Store: st, Rows: env.outbox, Comments: client}, Limit: 1000,
		Now: func() time.Time { return now }, Log: env.quiet}
	if _, err := pass.Run(ctx); err != nil {
		t.Fatal(err)
	}

	week := weekly.WeekOf(time.Now())
	payload := []byte(`{"week":"` + week.String() + `"}`)
	// The owner's digest for this week is sent once for good: a run of this
	// test again in the same emulator (-count) starts from no digest row,
	// and counts only the mail it caused.
	t.Cleanup(func() { forgetDigests(t, table, week.String()) })
	mailBefore := len(env.smtp.Messages())
	var reports []digest.Report
	for range 2 {
		var rep digest.Report
		if err := json.Unmarshal(invoke(t, "DigestFunctionName", payload), &rep); err != nil {
			t.Fatal(err)
		}
		reports = append(reports, rep)
	}
	if reports[0].Owners != 1 || reports[0].Sent != 1 || reports[1].Sent != 0 || reports[1].AlreadySent != 1 {
		entries, err := (&weekly.Entries{API: env.ddb, Table: table}).Week(ctx, week)
		t.Fatalf("runs %+v: want one opted-in owner, sent by the first run only (the week's entries: %+v, %v)", reports, entries, err)
	}
	// It went through the one delivery protocol: the owner's row is an
	// outbox row of the digest channel, sent, with its history.
	out, err := env.ddb.Query(ctx, &dynamodb.QueryInput{TableName: &table, ConsistentRead: aws.Bool(true),
		KeyConditionExpression:    aws.String("pk = :pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: "DIGEST#sent#" + week.String()}}})
	if err != nil {
		t.Fatal(err)
	}
	var rows []outbox.Row
	if err := attributevalue.UnmarshalListOfMaps(out.Items, &rows); err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].Channel != outbox.ChannelDigest || rows[0].Status != outbox.Sent || rows[0].NotifiedAt == "" || len(rows[0].Events) < 2 {
		t.Fatalf("the week's digest rows %+v: want the one owner's outbox row, sent, with its begin and mark", rows)
	}
	// Nothing verifies a sent digest (the reconciler leaves it to these
	// runs): it is out of the reconciler's doubt index.
	if _, in := out.Items[0][outbox.DoubtAttr]; in {
		t.Errorf("the sent digest row is still in the doubt index: %v", out.Items[0][outbox.DoubtAttr])
	}
	digests := func(rcpt string) []smtpstandin.Message {
		var out []smtpstandin.Message
		for _, m := range env.smtp.Messages()[mailBefore:] {
			if strings.HasPrefix(m.MessageID, "<digest.") && strings.Join(m.To, ",") == rcpt {
				out = append(out, m)
			}
		}
		return out
	}
	got := digests("lead@example.com")
	if len(got) != 1 || !strings.HasPrefix(got[0].MessageID, "<digest."+week.String()+".") {
		t.Fatalf("lead@example.com got %d digests (%v), want 1 for %s", len(got), got, week)
	}
	if n := len(digests("quiet@example.com")); n != 0 {
		t.Fatalf("quiet@example.com, an owner who did not opt in, got %d digests", n)
	}
	text := textPart(t, got[0].Raw)
	reviews := regexp.MustCompile(`Reviews touching these paths: (\d+)`).FindStringSubmatch(text)
	accepted := regexp.MustCompile(`Findings: (\d+); acceptance \S+ \((\d+) accepted`).FindStringSubmatch(text)
	if reviews == nil || accepted == nil || !strings.Contains(text, "//depot/projectA/...") || !strings.Contains(text, "Tokens: ") {
		t.Fatalf("the digest does not say what it must:\n%s", text)
	}
	if n, _ := strconv.Atoi(reviews[1]); n < 1 {
		t.Errorf("the digest counts %d reviews, want this test's review among them:\n%s", n, text)
	}
	if f, _ := strconv.Atoi(accepted[1]); f < 2 {
		t.Errorf("the digest counts %s findings, want this review's two at least:\n%s", accepted[1], text)
	}
	if a, _ := strconv.Atoi(accepted[2]); a < 1 {
		t.Errorf("the digest counts %s accepted, want the addressed finding:\n%s", accepted[2], text)
	}
}

// forgetDigests deletes the digest rows of week, as if no digest had been
// sent for it.
func forgetDigests(t *testing.T, table, week string) {
	ctx := context.Background()
	out, err := env.ddb.Query(ctx, &dynamodb.QueryInput{TableName: &table, ConsistentRead: aws.Bool(true),
		KeyConditionExpression:    aws.String("pk = :pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: "DIGEST#sent#" + week}}})
	if err != nil {
		t.Errorf("forget the week's digests: %v", err)
		return
	}
	for _, it := range out.Items {
		if _, err := env.ddb.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: &table, Key: map[string]types.AttributeValue{"pk": it["pk"], "sk": it["sk"]}}); err != nil {
			t.Errorf("forget a digest row: %v", err)
		}
	}
}
