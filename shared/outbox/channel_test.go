package outbox

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// An e-mail row and a Swarm comment row go through the same Begin; each is
// keyed by its own identity, and only the comment row carries channel
// attributes, so e-mail rows stay exactly as they were.
func TestBeginKeysEachChannelByItsIdentity(t *testing.T) {
	it := Item{Channel: ChannelSwarmComments, Thread: 885, ID: "finding/abc"}
	for _, tc := range []struct {
		name         string
		begin        func(o *Outbox) error
		pk, sk       string
		channelAttrs bool
	}{
		{"email", func(o *Outbox) error { _, err := o.Begin(context.Background(), k, "job-1", t0); return err },
			"OUTBOX#42#3", "RCPT#alice@example.com", false},
		{"swarm comment", func(o *Outbox) error { _, err := o.BeginItem(context.Background(), it, "job-1", t0); return err },
			"OUTBOX#SWARM#885", "ITEM#finding/abc", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api := &oneAnswerAPI{}
			if err := tc.begin(New(api, "jobs")); err != nil {
				t.Fatal(err)
			}
			if got := api.last.Key["pk"].(*types.AttributeValueMemberS).Value; got != tc.pk {
				t.Errorf("pk = %q, want %q", got, tc.pk)
			}
			if got := api.last.Key["sk"].(*types.AttributeValueMemberS).Value; got != tc.sk {
				t.Errorf("sk = %q, want %q", got, tc.sk)
			}
			upd := *api.last.UpdateExpression
			if has := strings.Contains(upd, "delivery_channel = :ch"); has != tc.channelAttrs {
				t.Errorf("update %q: channel attributes %v, want %v", upd, has, tc.channelAttrs)
			}
			if !strings.Contains(upd, "send_token = :tok") || !strings.Contains(upd, "last_write = :tok") {
				t.Errorf("update %q: no write token", upd)
			}
		})
	}
}

// A comment row's in-flight error names the comment, not an empty recipient.
func TestInFlightErrorNamesTheItem(t *testing.T) {
	r := &Row{Channel: ChannelSwarmComments, Thread: 885, Item: "summary/v1", Status: Sending}
	if got := (&InFlightError{Row: r}).Error(); !strings.Contains(got, "swarm-comments/reviews/885/summary/v1") {
		t.Errorf("error = %q", got)
	}
}
