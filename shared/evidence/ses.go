package evidence

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"

	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/obs"
)

// sesEvent is the part of an SES event-publishing record (or of an SES
// notification, which names the type notificationType) this package reads.
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

// ParseSES reads the SES events in a payload as Lambda receives it: an SNS
// event (one SES event per record, JSON in the message), an EventBridge
// event (the SES event in detail), or a bare SES event. Events that carry no
// outbox tag were not sent by this system and are skipped (counted in
// untagged).
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
		dec := json.NewDecoder(bytes.NewReader(raw))
		if err := dec.Decode(&se); err != nil {
			return nil, 0, failure.Errorf(failure.SchemaInvalid, "SES event %d is not JSON: %w", i, err)
		}
		typ := se.EventType
		if typ == "" {
			typ = se.NotificationType
		}
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

// HandleSES records the SES events of one Lambda payload (the sesevents
// function). A malformed payload will not heal on retry: it is logged,
// counted in the DeliveryEventsMalformed metric and dropped. A failed write
// is returned, so the event source retries the invocation.
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
