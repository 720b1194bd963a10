package mailchannel

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/criticizer/criticizer/shared/evidence"
	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/notify"
	"github.com/criticizer/criticizer/shared/secrets"
	"github.com/criticizer/criticizer/shared/ses"
	"github.com/criticizer/criticizer/shared/smtpmail"
	"github.com/criticizer/criticizer/shared/store/dynamotest"
)

// secretAPI answers GetSecretValue with value for every id.
type secretAPI struct{ value string }

func (s secretAPI) GetSecretValue(_ context.Context, in *secretsmanager.GetSecretValueInput, _ ...func(*secretsmanager.Options)) (*secretsmanager.GetSecretValueOutput, error) {
	return &secretsmanager.GetSecretValueOutput{ARN: in.SecretId, Name: in.SecretId, SecretString: aws.String(s.value), VersionId: aws.String("v1")}, nil
}

// The provider names the channel; a send in doubt is settled by the
// provider's evidence where there is some (SES's events, the relay's
// lookup) and left to an operator where there is none; a login that cannot
// be read fails the cold start, not the first send.
func TestNew(t *testing.T) {
	var lookups atomic.Int32
	relay := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		lookups.Add(1)
		_, _ = w.Write([]byte(`[]`))
	}))
	defer relay.Close()
	login := `{"username":"criticizer","password":"secret"}`
	smtp := smtpmail.Config{Host: "smtp.example.com", TLS: smtpmail.TLSNone}
	for _, tc := range []struct {
		name         string
		s            Settings
		secret       string
		wantErr      bool
		want         string // the channel's type
		unconfirmed  bool   // its lookup: DELIVERY_UNCONFIRMED
		relayLookups int32
	}{
		{name: "ses", s: Settings{Evidence: evidence.Settings{Provider: "ses"}, SESConfigurationSet: "criticizer"}, want: "*ses.Channel"},
		{name: "ses without a configuration set", s: Settings{Evidence: evidence.Settings{Provider: "ses"}}, wantErr: true},
		{name: "smtp with the relay's lookup", s: Settings{Evidence: evidence.Settings{Provider: "smtp", LookupURL: relay.URL}, SMTP: smtp, SMTPSecretID: "smtp"},
			secret: login, want: "*smtpmail.Channel", relayLookups: 1},
		{name: "smtp without a lookup", s: Settings{Evidence: evidence.Settings{Provider: "smtp"}, SMTP: smtp, SMTPSecretID: "smtp"},
			secret: login, want: "*smtpmail.Channel", unconfirmed: true},
		{name: "smtp with an unreadable login", s: Settings{Evidence: evidence.Settings{Provider: "smtp"}, SMTP: smtp, SMTPSecretID: "smtp"},
			secret: "not json", wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lookups.Store(0)
			d := Deps{Jobs: dynamotest.New(), Table: dynamotest.Table, Secrets: secrets.New(secretAPI{tc.secret}, time.Minute), Log: slog.New(slog.DiscardHandler)}
			ch, err := New(context.Background(), tc.s, d)
			if tc.wantErr {
				if err == nil {
					t.Fatalf("built %T, want an error", ch)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			switch ch.(type) {
			case *ses.Channel:
				if tc.want != "*ses.Channel" {
					t.Fatalf("channel %T, want %s", ch, tc.want)
				}
			case *smtpmail.Channel:
				if tc.want != "*smtpmail.Channel" {
					t.Fatalf("channel %T, want %s", ch, tc.want)
				}
			default:
				t.Fatalf("channel %T", ch)
			}
			_, found, err := ch.Lookup(context.Background(), &notify.Message{MessageID: "<cl1.v1.ab@example.com>"}, 0)
			if unconfirmed := failure.Classify(err) == failure.DeliveryUnconfirmed; unconfirmed != tc.unconfirmed || (!unconfirmed && err != nil) || found {
				t.Errorf("lookup: found %v, %v; want unconfirmed %v", found, err, tc.unconfirmed)
			}
			if n := lookups.Load(); n != tc.relayLookups {
				t.Errorf("the relay was asked %d times, want %d", n, tc.relayLookups)
			}
		})
	}
}
