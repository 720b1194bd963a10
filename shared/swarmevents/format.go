// Package swarmevents receives P4 Code Review's signed outbound webhooks (2025
// and later; docs/reference/swarm.md "Outbound webhooks"): signature check,
// deduplication by delivery id, and comment events turned into outcome reads.
// Off unless enabled.
//
// *Unverified*: the documentation names neither headers, signature scheme nor
// payload schema. Every guess at them is here, in HMAC, with configurable
// header names, so the instance's own page changes one place.
package swarmevents

import (
	"bytes"
	"cmp"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/criticizer/criticizer/shared/swarm"
)

// Header returns a request header by name, case-insensitively.
type Header func(name string) string

// Delivery is one webhook POST as we use it.
type Delivery struct {
	ID     string // the delivery id: a retry carries the same one
	Event  string // as P4 Code Review names it; logged, not interpreted
	Review int64
	// Comment is the comment the event is about, as it stands after the
	// event; nil for an event that is not about a comment.
	Comment *swarm.Comment
}

// Default header names: *unverified* guesses in P4 Code Review's own style,
// each replaceable by a setting (SWARM_EVENTS_*_HEADER).
const (
	DefaultSignatureHeader = "X-Swarm-Signature"
	DefaultDeliveryHeader  = "X-Swarm-Delivery"
	DefaultEventHeader     = "X-Swarm-Event"
)

// HMAC is the common webhook senders' scheme, assumed (*unverified*):
// HMAC-SHA256 of the raw body, hex or base64, maybe "sha256="-prefixed. With
// TimestampHeader, a Unix-seconds timestamp must be no older than Tolerance and
// no more than Skew (CLOCK_SKEW_SECONDS) ahead, so a future stamp cannot be
// replayed at will. An empty key never verifies.
type HMAC struct {
	SignatureHeader, DeliveryHeader, EventHeader string
	TimestampHeader                              string // "": no timestamp check
	Tolerance                                    time.Duration
	Skew                                         time.Duration
}

// Reasons a delivery is refused with 401; each error's text is its code.
var (
	ErrMissingSignature = errors.New("missing_signature")
	ErrBadSignature     = errors.New("invalid_signature")
	ErrBadTimestamp     = errors.New("invalid_timestamp")
	ErrStaleTimestamp   = errors.New("stale_timestamp")
)

// Verify checks the signature against every key (the current secret
// version, then the previous during a rotation), in constant time.
func (s HMAC) Verify(h Header, body []byte, keys [][]byte, now time.Time) error {
	if s.TimestampHeader != "" {
		ts, err := strconv.ParseInt(strings.TrimSpace(h(s.TimestampHeader)), 10, 64)
		if err != nil || ts <= 0 {
			return ErrBadTimestamp
		}
		if d := now.Sub(time.Unix(ts, 0)); d > s.Tolerance || d < -s.Skew {
			return ErrStaleTimestamp
		}
	}
	v := strings.TrimSpace(h(s.SignatureHeader))
	if v == "" {
		return ErrMissingSignature
	}
	v = strings.TrimPrefix(strings.TrimPrefix(v, "sha256="), "SHA256=")
	got, err := hex.DecodeString(v)
	if err != nil || len(got) != sha256.Size {
		if got, err = base64.StdEncoding.DecodeString(v); err != nil || len(got) != sha256.Size {
			return ErrBadSignature
		}
	}
	for _, k := range keys {
		if len(k) > 0 && hmac.Equal(got, Sign(k, body)) {
			return nil
		}
	}
	return ErrBadSignature
}

// Sign is the signature HMAC expects of body: for the stand-in and tests.
func Sign(key, body []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write(body)
	return m.Sum(nil)
}

// maxDeliveryID bounds a delivery id (it becomes a DynamoDB key).
const maxDeliveryID = 200

// Parse reads the delivery; the payload schema is *unverified*: "event" or
// "type", the review ("review" id or object with "id", else the comment topic
// reviews/<id>) and "comment" in the comments API's shape.
func (s HMAC) Parse(h Header, body []byte) (Delivery, error) {
	d := Delivery{ID: strings.TrimSpace(h(s.DeliveryHeader)), Event: strings.TrimSpace(h(s.EventHeader))}
	if d.ID == "" || len(d.ID) > maxDeliveryID || strings.ContainsFunc(d.ID, func(r rune) bool { return r < 0x21 || r > 0x7e }) {
		return Delivery{}, fmt.Errorf("header %s must carry the delivery id (1–%d printable characters)", s.DeliveryHeader, maxDeliveryID)
	}
	var p struct {
		Event   string          `json:"event"`
		Type    string          `json:"type"`
		Review  json.RawMessage `json:"review"`
		Comment json.RawMessage `json:"comment"`
	}
	if err := json.Unmarshal(body, &p); err != nil {
		return Delivery{}, errors.New("body is not a JSON object")
	}
	d.Event = cmp.Or(d.Event, p.Event, p.Type)
	if c := bytes.TrimSpace(p.Comment); len(c) > 0 && c[0] == '{' {
		cm, err := swarm.DecodeComment(c)
		if err != nil {
			return Delivery{}, errors.New("comment is not a Swarm comment")
		}
		d.Comment = &cm
	}
	d.Review = reviewID(p.Review)
	if d.Review == 0 && d.Comment != nil {
		d.Review, _ = strconv.ParseInt(strings.TrimPrefix(d.Comment.Topic, "reviews/"), 10, 64)
	}
	if d.Comment != nil && d.Review <= 0 {
		return Delivery{}, errors.New("a comment event must name its review (review, or the comment's topic reviews/<id>)")
	}
	return d, nil
}

func reviewID(raw json.RawMessage) int64 {
	var obj struct {
		ID json.Number `json:"id"`
	}
	var n json.Number
	if json.Unmarshal(raw, &obj) == nil && obj.ID != "" {
		n = obj.ID
	} else if json.Unmarshal(raw, &n) != nil {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return 0
		}
		n = json.Number(s)
	}
	id, _ := n.Int64()
	return id
}
