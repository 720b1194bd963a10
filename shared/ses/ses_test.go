package ses

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sesv2"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/criticizer/criticizer/shared/delivery"
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/evidence"
	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/letter"
	"github.com/criticizer/criticizer/shared/notify"
)

type fakeSES struct {
	in  *sesv2.SendEmailInput
	err error
}

func (f *fakeSES) SendEmail(_ context.Context, in *sesv2.SendEmailInput, _ ...func(*sesv2.Options)) (*sesv2.SendEmailOutput, error) {
	f.in = in
	if f.err != nil {
		return nil, f.err
	}
	return &sesv2.SendEmailOutput{MessageId: aws.String("0100019a-ses-0001")}, nil
}

func compose(t *testing.T) (delivery.Key, *notify.Message) {
	t.Helper()
	k := delivery.Key{Changelist: 4242, Recipient: "alice@example.com", ReviewVersion: 1}
	m, err := notify.Compose(k, letter.Content{JobID: "job-1", Review: domain.ReviewResult{Summary: "fine"}},
		notify.Envelope{From: "Criticizer <criticizer@example.com>"})
	if err != nil {
		t.Fatal(err)
	}
	return k, m
}

func TestSendTagsTheMessageWithItsOutboxTag(t *testing.T) {
	api := &fakeSES{}
	s, err := New(api, "criticizer-staging", nil)
	if err != nil {
		t.Fatal(err)
	}
	k, m := compose(t)
	id, err := s.Send(context.Background(), k, m)
	if err != nil || id != "0100019a-ses-0001" {
		t.Fatalf("Send = %q, %v", id, err)
	}
	in := api.in
	if aws.ToString(in.ConfigurationSetName) != "criticizer-staging" {
		t.Errorf("configuration set %q", aws.ToString(in.ConfigurationSetName))
	}
	if len(in.EmailTags) != 1 || aws.ToString(in.EmailTags[0].Name) != evidence.TagName || aws.ToString(in.EmailTags[0].Value) != evidence.Tag(m.MessageID) {
		t.Errorf("tags %+v, want %s=%s", in.EmailTags, evidence.TagName, evidence.Tag(m.MessageID))
	}
	if got := aws.ToString(in.FromEmailAddress); got != m.From || !strings.Contains(got, "<criticizer@example.com>") {
		t.Errorf("from %q: want the composed From (SES checks that identity)", aws.ToString(in.FromEmailAddress))
	}
	if len(in.Destination.ToAddresses) != 1 || in.Destination.ToAddresses[0] != "alice@example.com" {
		t.Errorf("destination %+v", in.Destination)
	}
	want, _ := m.Bytes()
	if !bytes.Equal(in.Content.Raw.Data, want) || !bytes.Contains(want, []byte("Message-ID: "+m.MessageID)) {
		t.Errorf("raw message is not the composed one with its deterministic Message-ID")
	}
}

func TestSendGuards(t *testing.T) {
	if _, err := New(&fakeSES{}, "", nil); failure.Classify(err) != failure.InternalBug {
		t.Errorf("no configuration set: err = %v, want INTERNAL_BUG", err)
	}
	s, _ := New(&fakeSES{}, "cs", nil)
	k, m := compose(t)
	k.ReviewVersion++
	if _, err := s.Send(context.Background(), k, m); failure.Classify(err) != failure.InternalBug {
		t.Errorf("key mismatch: err = %v, want INTERNAL_BUG", err)
	}
}

func apiErr(code string, status int) error {
	return &smithy.OperationError{ServiceID: "SESv2", OperationName: "SendEmail", Err: &smithyhttp.ResponseError{
		Response: &smithyhttp.Response{Response: &http.Response{StatusCode: status}},
		Err:      &smithy.GenericAPIError{Code: code, Message: "x"}}}
}

func TestClassify(t *testing.T) {
	tests := []struct {
		name    string
		err     error
		class   failure.Class
		unknown bool
	}{
		{"message rejected", apiErr("MessageRejected", 400), failure.PolicyRejected, false},
		{"throttled", apiErr("TooManyRequestsException", 429), failure.RateLimited, false},
		{"daily quota", apiErr("LimitExceededException", 400), failure.RateLimited, false},
		{"IAM denies", apiErr("AccessDeniedException", 403), failure.AuthDenied, false},
		{"configuration set missing", apiErr("NotFoundException", 404), failure.InternalBug, false},
		{"sending paused", apiErr("SendingPausedException", 400), failure.Upstream5xx, false},
		{"server error: may have sent", apiErr("InternalFailure", 500), failure.Upstream5xx, true},
		{"never connected", &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}, failure.NetworkTimeout, false},
		{"no reply: may have sent", &net.OpError{Op: "read", Net: "tcp", Err: errors.New("connection reset")}, failure.NetworkTimeout, true},
		{"deadline: may have sent", context.DeadlineExceeded, failure.NetworkTimeout, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Classify(tt.err)
			if c := failure.Classify(err); c != tt.class {
				t.Errorf("class = %s, want %s", c, tt.class)
			}
			if u := errors.Is(err, delivery.ErrOutcomeUnknown); u != tt.unknown {
				t.Errorf("outcome unknown = %v, want %v", u, tt.unknown)
			}
		})
	}
}
