// Package evidence owns the provider's evidence of a send: the delivery
// events an e-mail provider publishes (for SES: send, delivery, bounce,
// complaint, reject), recorded in the jobs table under the outbox tag every
// message carries (derived from its deterministic Message-ID), and the lookup
// the notify stage makes before it resends a send that may have happened.
package evidence

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/criticizer/criticizer/shared/awserr"
	"github.com/criticizer/criticizer/shared/config"
	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/obs"
	"github.com/criticizer/criticizer/shared/settings"
	"github.com/criticizer/criticizer/shared/store"
)

// TagName is the message tag (SES EmailTags) that carries the outbox tag.
const TagName = "criticizer-outbox"

// EventType is a provider delivery event, named as SES names them.
type EventType string

const (
	Send             EventType = "Send"             // the provider accepted the message
	Delivery         EventType = "Delivery"         // the recipient's server accepted it
	DeliveryDelay    EventType = "DeliveryDelay"    // accepted, delivery still being attempted
	Bounce           EventType = "Bounce"           // accepted, then the recipient's server refused it
	Complaint        EventType = "Complaint"        // delivered, and marked as spam
	Reject           EventType = "Reject"           // refused by the provider (e.g. a virus): never sent
	RenderingFailure EventType = "RenderingFailure" // a template failed: never sent
)

// Accepted reports whether the event proves the provider took the message:
// a resend would be a second e-mail (or bounce again).
func (t EventType) Accepted() bool {
	switch t {
	case Send, Delivery, DeliveryDelay, Bounce, Complaint:
		return true
	}
	return false
}

// Event is one delivery event for one message.
type Event struct {
	Tag               string    `dynamodbav:"tag"`
	Type              EventType `dynamodbav:"event_type"`
	ProviderMessageID string    `dynamodbav:"provider_message_id"`
	At                string    `dynamodbav:"occurred_at"`
	BounceType        string    `dynamodbav:"bounce_type,omitempty"` // Permanent, Transient, Undetermined
	RecordedAt        string    `dynamodbav:"recorded_at"`
	ExpiresAt         int64     `dynamodbav:"expires_at"` // DynamoDB TTL, epoch seconds
}

// Tag returns the outbox tag of a message from its Message-ID
// ("<cl12.v1.3f2a…@example.com>" → "cl12_v1_3f2a…"): its local part, unique
// per outbox key, with what SES does not allow in a tag (letters, digits, _
// and - only) as '_'.
func Tag(messageID string) string {
	id := strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(messageID), "<"), ">")
	if at := strings.LastIndexByte(id, '@'); at >= 0 {
		id = id[:at]
	}
	b := []byte(id)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			b[i] = '_'
		}
	}
	if len(b) > 256 {
		b = b[:256]
	}
	return string(b)
}

// DefaultRetention keeps delivery events as long as the outbox rows they
// prove (30 days).
const DefaultRetention = 30 * 24 * time.Hour

// Table reads and writes delivery events in the jobs table.
type Table struct {
	api       store.LogAPI
	table     string
	retention time.Duration
	now       func() time.Time
}

// New returns a Table over the table keeping events for retention (DefaultRetention when zero).
func New(api store.LogAPI, table string, retention time.Duration) *Table {
	if retention <= 0 {
		retention = DefaultRetention
	}
	return &Table{api: api, table: table, retention: retention, now: job.Now}
}

func pk(tag string) string { return "DELIVERY#" + tag }

// Record stores e, keyed by (tag, type, provider id): a redelivered event
// overwrites itself.
func (l *Table) Record(ctx context.Context, e Event) error {
	if e.Tag == "" || e.Type == "" {
		return failure.Errorf(failure.SchemaInvalid, "delivery event without tag or type")
	}
	now := l.now()
	e.RecordedAt, e.ExpiresAt = job.FormatTime(now), now.Add(l.retention).Unix()
	item, err := attributevalue.MarshalMap(e)
	if err != nil {
		return failure.Wrap(failure.InternalBug, err)
	}
	item["pk"] = &types.AttributeValueMemberS{Value: pk(e.Tag)}
	item["sk"] = &types.AttributeValueMemberS{Value: fmt.Sprintf("EVENT#%s#%s", e.Type, e.ProviderMessageID)}
	if _, err := l.api.PutItem(ctx, &dynamodb.PutItemInput{TableName: &l.table, Item: item}); err != nil {
		return awserr.Wrap("record delivery event", err)
	}
	return nil
}

// Events returns every recorded event of the message with this Message-ID.
func (l *Table) Events(ctx context.Context, messageID string) ([]Event, error) {
	items, err := store.Partition(ctx, l.api, l.table, pk(Tag(messageID)), "read delivery events")
	if err != nil {
		return nil, err
	}
	var events []Event
	if err := attributevalue.UnmarshalListOfMaps(items, &events); err != nil {
		return nil, failure.Wrap(failure.InternalBug, err)
	}
	return events, nil
}

// Delivered reports whether the provider accepted the message with this
// Message-ID: notify's lookup before a resend. A "no" is only trusted after
// the provider's send-completion window.
func (l *Table) Delivered(ctx context.Context, messageID string) (bool, error) {
	events, err := l.Events(ctx, messageID)
	if err != nil {
		return false, err
	}
	for _, e := range events {
		if e.Type.Accepted() {
			return true, nil
		}
	}
	return false, nil
}

// DefaultWindow is how long after a send started the provider may still
// publish its evidence, per EMAIL_PROVIDER: an SMTP relay's log has it at
// once; SES publishes through SNS or EventBridge, with retries for minutes.
func DefaultWindow(provider string) time.Duration {
	if provider == "ses" {
		return 15 * time.Minute
	}
	return 5 * time.Minute
}

// HTTP asks an HTTP endpoint for accepted messages:
// GET <URL>?message_id=<id> answering a JSON array (empty when unknown). The
// local SMTP stand-in serves it; a relay's message-tracking API can too.
type HTTP struct {
	URL    string
	Client *http.Client
}

// Delivered reports whether the endpoint knows the Message-ID.
func (l HTTP) Delivered(ctx context.Context, messageID string) (bool, error) {
	c := l.Client
	if c == nil {
		c = &http.Client{Timeout: 10 * time.Second}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, l.URL+"?message_id="+url.QueryEscape(messageID), nil)
	if err != nil {
		return false, failure.Wrap(failure.InternalBug, err)
	}
	resp, err := c.Do(req)
	if err != nil {
		return false, fmt.Errorf("evidence lookup: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return false, failure.Upstream(resp.StatusCode, 0, fmt.Errorf("evidence lookup: HTTP %d", resp.StatusCode))
	}
	var found []json.RawMessage
	if err := json.NewDecoder(resp.Body).Decode(&found); err != nil {
		return false, failure.Errorf(failure.Upstream5xx, "evidence lookup: %w", err)
	}
	return len(found) > 0, nil
}

// sesEvent is what is read of an SES event record (or notification).
type sesEvent struct {
	EventType        string `json:"eventType"`
	NotificationType string `json:"notificationType"`
	Mail             struct {
		Timestamp string              `json:"timestamp"`
		MessageID string              `json:"messageId"`
		Tags      map[string][]string `json:"tags"`
	} `json:"mail"`
	Bounce *struct {
		BounceType string `json:"bounceType"`
	} `json:"bounce"`
}

// ParseSES reads the SES events of a Lambda payload: an SNS event (one per
// record), an EventBridge event (in detail) or a bare SES event. Events
// without an outbox tag were not ours: skipped, counted in untagged.
func ParseSES(payload []byte) (events []Event, untagged int, err error) {
	var probe struct {
		Records []struct {
			SNS struct {
				Message string `json:"Message"`
			} `json:"Sns"`
		} `json:"Records"`
		Detail json.RawMessage `json:"detail"`
		Source string          `json:"source"`
	}
	if err := json.Unmarshal(payload, &probe); err != nil {
		return nil, 0, failure.Errorf(failure.SchemaInvalid, "delivery event payload is not JSON: %w", err)
	}
	var raws [][]byte
	switch {
	case len(probe.Records) > 0:
		for _, r := range probe.Records {
			raws = append(raws, []byte(r.SNS.Message))
		}
	case len(probe.Detail) > 0:
		if probe.Source != "aws.ses" {
			return nil, 0, failure.Errorf(failure.SchemaInvalid, "EventBridge event from %q, want aws.ses", probe.Source)
		}
		raws = append(raws, probe.Detail)
	default:
		raws = append(raws, payload)
	}
	for i, raw := range raws {
		var se sesEvent
		if err := json.NewDecoder(bytes.NewReader(raw)).Decode(&se); err != nil {
			return nil, 0, failure.Errorf(failure.SchemaInvalid, "SES event %d is not JSON: %w", i, err)
		}
		typ := cmp.Or(se.EventType, se.NotificationType)
		if typ == "" || se.Mail.MessageID == "" {
			return nil, 0, failure.Errorf(failure.SchemaInvalid, "SES event %d has no event type or message id", i)
		}
		tags := se.Mail.Tags[TagName]
		if len(tags) == 0 || tags[0] == "" {
			untagged++
			continue
		}
		e := Event{Tag: tags[0], Type: EventType(typ), ProviderMessageID: se.Mail.MessageID, At: se.Mail.Timestamp}
		if se.Bounce != nil {
			e.BounceType = se.Bounce.BounceType
		}
		events = append(events, e)
	}
	return events, untagged, nil
}

// Report says what one delivery-events invocation did.
type Report struct {
	Recorded int `json:"recorded"`
	Untagged int `json:"untagged"`
}

// HandleSES records the SES events of one payload (the sesevents function).
// A malformed payload will not heal: logged, counted in
// DeliveryEventsMalformed and dropped; a failed write is returned, to be retried.
func (l *Table) HandleSES(ctx context.Context, payload []byte, log *slog.Logger, metrics *obs.Metrics) (Report, error) {
	events, untagged, err := ParseSES(payload)
	if err != nil {
		log.ErrorContext(ctx, "delivery event dropped: malformed", "err", err, "bytes", len(payload))
		metrics.Put("DeliveryEventsMalformed", 1, obs.Count, nil)
		return Report{}, nil
	}
	rep := Report{Untagged: untagged}
	for _, e := range events {
		if err := l.Record(ctx, e); err != nil {
			return rep, fmt.Errorf("delivery event %s %s: %w", e.Type, e.Tag, err)
		}
		log.InfoContext(ctx, "delivery event recorded", "event_type", e.Type, "tag", e.Tag, "provider_message_id", e.ProviderMessageID)
		metrics.Put("DeliveryEvents", 1, obs.Count, map[string]string{"EventType": string(e.Type)})
		rep.Recorded++
	}
	return rep, nil
}

// Settings say where the provider's evidence of a send is and how long a
// send may take to show up there. The notify stage and the sweeper's
// reconciler read the same settings, so they judge a send alike.
type Settings struct {
	Provider string // EMAIL_PROVIDER: "smtp" (default) or "ses".
	// From is SMTP_FROM, the sender address: every Message-ID carries its
	// domain, so the lookup needs it.
	From string
	// LookupURL is SMTP_LOOKUP_URL, the relay's message lookup (smtp only);
	// "" for none: an uncertain SMTP send then waits for an operator.
	LookupURL string
	// Window is SEND_COMPLETION_WINDOW_SECONDS: how long after a send
	// started the provider may still complete it (default DefaultWindow).
	Window time.Duration
}

// SettingsFromEnv reads the evidence settings; problems are collected in r.
func SettingsFromEnv(r *config.Reader) Settings {
	s := Settings{Provider: r.OneOf(settings.EmailProvider), From: r.String(settings.SMTPFrom)}
	if s.From != "" && !strings.Contains(s.From, "@") {
		r.Fail(fmt.Errorf("SMTP_FROM=%q must be an e-mail address", s.From))
	}
	if s.Provider == "smtp" {
		s.LookupURL = r.Optional(settings.SMTPLookupURL)
	}
	// 0 (the declared default) is the provider's own window.
	if s.Window = r.Seconds(settings.SendCompletionWindowSeconds); s.Window == 0 {
		s.Window = DefaultWindow(s.Provider)
	}
	return s
}

// FromDomain is the domain of From, which every deterministic Message-ID carries.
func (s Settings) FromDomain() string { return s.From[strings.LastIndexByte(s.From, '@')+1:] }
