package swarmevents_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/criticizer/criticizer/shared/outbox"
	"github.com/criticizer/criticizer/shared/outcome"
	"github.com/criticizer/criticizer/shared/store/dynamotest"
	"github.com/criticizer/criticizer/shared/swarm"
	"github.com/criticizer/criticizer/shared/swarmevents"
)

var (
	key    = []byte("swarm-events-secret")
	now    = time.Unix(1_800_000_000, 0)
	scheme = swarmevents.HMAC{SignatureHeader: swarmevents.DefaultSignatureHeader, DeliveryHeader: swarmevents.DefaultDeliveryHeader,
		EventHeader: swarmevents.DefaultEventHeader}
)

func headers(m map[string]string) swarmevents.Header {
	return func(name string) string {
		for k, v := range m {
			if strings.EqualFold(k, name) {
				return v
			}
		}
		return ""
	}
}

func TestHMACVerify(t *testing.T) {
	body := []byte(`{"event":"comment.liked"}`)
	sig := swarmevents.Sign(key, body)
	withTS := scheme
	withTS.TimestampHeader, withTS.Tolerance, withTS.Skew = "X-Swarm-Timestamp", 5*time.Minute, 2*time.Second
	ts := strconv.FormatInt(now.Unix(), 10)
	cases := []struct {
		name   string
		s      swarmevents.HMAC
		h      map[string]string
		body   []byte
		keys   [][]byte
		reason error
	}{
		{"hex", scheme, map[string]string{"x-swarm-signature": hex.EncodeToString(sig)}, body, [][]byte{key}, nil},
		{"sha256= prefix", scheme, map[string]string{"X-Swarm-Signature": "sha256=" + hex.EncodeToString(sig)}, body, [][]byte{key}, nil},
		{"base64", scheme, map[string]string{"X-Swarm-Signature": base64.StdEncoding.EncodeToString(sig)}, body, [][]byte{key}, nil},
		{"previous key during a rotation", scheme, map[string]string{"X-Swarm-Signature": hex.EncodeToString(sig)}, body, [][]byte{[]byte("new"), key}, nil},
		{"missing", scheme, nil, body, [][]byte{key}, swarmevents.ErrMissingSignature},
		{"body changed", scheme, map[string]string{"X-Swarm-Signature": hex.EncodeToString(sig)}, append(bytes.Clone(body), ' '), [][]byte{key}, swarmevents.ErrBadSignature},
		{"other key", scheme, map[string]string{"X-Swarm-Signature": hex.EncodeToString(sig)}, body, [][]byte{[]byte("other")}, swarmevents.ErrBadSignature},
		{"not a digest", scheme, map[string]string{"X-Swarm-Signature": "abc"}, body, [][]byte{key}, swarmevents.ErrBadSignature},
		{"timestamp fresh", withTS, map[string]string{"X-Swarm-Signature": hex.EncodeToString(sig), "X-Swarm-Timestamp": ts}, body, [][]byte{key}, nil},
		{"timestamp missing", withTS, map[string]string{"X-Swarm-Signature": hex.EncodeToString(sig)}, body, [][]byte{key}, swarmevents.ErrBadTimestamp},
		{"timestamp within the clock skew ahead", withTS, map[string]string{"X-Swarm-Signature": hex.EncodeToString(sig), "X-Swarm-Timestamp": strconv.FormatInt(now.Unix()+2, 10)}, body, [][]byte{key}, nil},
		{"timestamp in the future beyond the skew", withTS, map[string]string{"X-Swarm-Signature": hex.EncodeToString(sig), "X-Swarm-Timestamp": strconv.FormatInt(now.Unix()+60, 10)}, body, [][]byte{key}, swarmevents.ErrStaleTimestamp},
		{"an empty key verifies nothing", scheme, map[string]string{"X-Swarm-Signature": hex.EncodeToString(swarmevents.Sign(nil, body))}, body, [][]byte{{}}, swarmevents.ErrBadSignature},
		{"timestamp stale", withTS, map[string]string{"X-Swarm-Signature": hex.EncodeToString(sig), "X-Swarm-Timestamp": strconv.FormatInt(now.Unix()-301, 10)}, body, [][]byte{key}, swarmevents.ErrStaleTimestamp},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.s.Verify(headers(tc.h), tc.body, tc.keys, now); !errors.Is(err, tc.reason) || (tc.reason == nil) != (err == nil) {
				t.Errorf("Verify = %v, want %v", err, tc.reason)
			}
		})
	}
}

func TestHMACParse(t *testing.T) {
	cases := []struct {
		name    string
		h       map[string]string
		body    string
		review  int64
		comment int64
		replyTo int64
		err     string
	}{
		{"review object", map[string]string{"X-Swarm-Delivery": "d1"}, `{"event":"comment.updated","review":{"id":42},"comment":{"id":7,"taskState":"addressed","context":{"file":"//depot/a.c","rightLine":3}}}`, 42, 7, 0, ""},
		{"review from the topic", map[string]string{"X-Swarm-Delivery": "d1"}, `{"type":"comment.reply","comment":{"id":9,"topic":"reviews/43","body":"👎","context":{"comment":7}}}`, 43, 9, 7, ""},
		{"review as a string", map[string]string{"X-Swarm-Delivery": "d1"}, `{"review":"44","comment":{"id":1,"context":[]}}`, 44, 1, 0, ""},
		{"a review event", map[string]string{"X-Swarm-Delivery": "d1", "X-Swarm-Event": "review.updated"}, `{"review":{"id":42}}`, 42, 0, 0, ""},
		{"no delivery id", nil, `{"review":42}`, 0, 0, 0, "delivery id"},
		{"delivery id with a space", map[string]string{"X-Swarm-Delivery": "a b"}, `{"review":42}`, 0, 0, 0, "delivery id"},
		{"not JSON", map[string]string{"X-Swarm-Delivery": "d1"}, `review=42`, 0, 0, 0, "JSON"},
		{"comment without its review", map[string]string{"X-Swarm-Delivery": "d1"}, `{"comment":{"id":1}}`, 0, 0, 0, "review"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d, err := scheme.Parse(headers(tc.h), []byte(tc.body))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("Parse = %+v, %v; want an error about %s", d, err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var id, reply int64
			if d.Comment != nil {
				id, reply = d.Comment.ID, d.Comment.ReplyTo
			}
			if d.ID != "d1" || d.Review != tc.review || id != tc.comment || reply != tc.replyTo {
				t.Errorf("Parse = %+v (comment %d reply to %d), want review %d comment %d reply to %d", d, id, reply, tc.review, tc.comment, tc.replyTo)
			}
		})
	}
}

type rows []outbox.Row

func (r rows) ListThread(context.Context, string, int64) ([]outbox.Row, error) { return r, nil }

type failing struct{ swarmevents.Outcomes }

func (failing) Point(context.Context, int64) (bool, bool, error) {
	return false, false, errors.New("table unavailable")
}

// listed is the review's comments as Swarm's API lists them.
type listed struct{ comments []swarm.Comment }

func (l *listed) List(context.Context, int64) ([]swarm.Comment, error) { return l.comments, nil }

// The receiver: a signed event only points, its review is read back from
// Swarm's API and the fate raised from what Swarm shows (a forged body
// records nothing); the same delivery again is a duplicate; a bad
// signature is a 401 that records nothing; a failure of ours is a 503
// that lets the retry do the work.
func TestReceiver(t *testing.T) {
	ctx := context.Background()
	db := dynamotest.New()
	st := outcome.NewStore(db, dynamotest.Table)
	if _, err := st.Posted(ctx, outcome.Record{Review: 42, Fingerprint: "fpA", Category: "bug", Kind: "k", File: "//depot/a/x.c"}); err != nil {
		t.Fatal(err)
	}
	ours := swarm.Comment{ID: 7, User: "svc", TaskState: swarm.TaskOpen}
	api := &listed{comments: []swarm.Comment{ours}}
	reader := &outcome.Reader{Store: st, Rows: rows{{Item: swarm.KindFinding + "/fpA", NotificationID: "7", NotifiedAt: "2026-11-01T00:00:00Z"}}, Comments: api}
	r := &swarmevents.Receiver{Scheme: scheme, Claims: swarmevents.NewDeliveries(db, dynamotest.Table, time.Hour), Outcomes: reader,
		Keys: func(context.Context, bool) ([][]byte, error) { return [][]byte{key}, nil },
		Log:  slog.New(slog.NewTextHandler(io.Discard, nil)), Now: func() time.Time { return now }}
	send := func(id, body string, sign []byte) swarmevents.Answer {
		return r.Receive(ctx, headers(map[string]string{"X-Swarm-Delivery": id, "X-Swarm-Signature": hex.EncodeToString(swarmevents.Sign(sign, []byte(body)))}), []byte(body))
	}
	fate := func() outcome.Fate {
		recs, err := st.Review(ctx, 42)
		if err != nil || len(recs) != 1 {
			t.Fatalf("records %v %v", recs, err)
		}
		return recs[0].Fate
	}
	reply := `{"event":"comment.reply","review":{"id":42},"comment":{"id":9,"user":"alice","body":"False positive","context":{"comment":7}}}`
	if a := send("d-forged", reply, []byte("not the secret")); a.Status != http.StatusUnauthorized || a.Code != "invalid_signature" {
		t.Fatalf("forged: %+v, want 401 invalid_signature", a)
	}
	if a := send("d0", reply, key); a.Status != http.StatusOK || a.Result != "unchanged" || fate() != outcome.Open {
		t.Fatalf("a signed event whose reply Swarm does not show: %+v, fate %s; want unchanged, open", a, fate())
	}
	api.comments = append(api.comments, swarm.Comment{ID: 9, User: "alice", Body: "False positive", ReplyTo: 7})
	if a := send("d1", reply, key); a.Status != http.StatusOK || a.Result != "recorded" {
		t.Fatalf("first delivery: %+v, want 200 recorded", a)
	}
	if a := send("d1", reply, key); a.Status != http.StatusOK || a.Result != "duplicate" {
		t.Fatalf("retried delivery: %+v, want 200 duplicate", a)
	}
	liked := `{"event":"comment.liked","review":{"id":42},"comment":{"id":7,"user":"svc","likes":["bob"]}}`
	if a := send("d2", liked, key); a.Status != http.StatusOK || a.Result != "unchanged" {
		t.Fatalf("a like the event claims and Swarm does not show: %+v, want 200 unchanged", a)
	}
	if f := fate(); f != outcome.Dismissed {
		t.Fatalf("fate %s, want dismissed", f)
	}
	other := `{"review":{"id":43},"comment":{"id":8,"user":"bob","taskState":"addressed"}}`
	if a := send("d3", other, key); a.Status != http.StatusOK || a.Result != "ignored" {
		t.Fatalf("a review we never commented on: %+v, want 200 ignored", a)
	}

	r.Outcomes = failing{}
	if a := send("d4", liked, key); a.Status != http.StatusServiceUnavailable {
		t.Fatalf("failing store: %+v, want 503", a)
	}
	r.Outcomes = reader
	if a := send("d4", liked, key); a.Status != http.StatusOK || a.Result == "duplicate" {
		t.Fatalf("the retry after a 503: %+v, want it done, not taken for a duplicate", a)
	}
}

// An events secret holding an empty key refuses every delivery (503, the
// secret's fault), even one signed with the empty key.
func TestReceiverRefusesAnEmptyKey(t *testing.T) {
	body := `{"review":{"id":42},"comment":{"id":7}}`
	r := &swarmevents.Receiver{Scheme: scheme, Claims: nil, Outcomes: failing{},
		Keys: func(context.Context, bool) ([][]byte, error) { return [][]byte{{}}, nil },
		Log:  slog.New(slog.NewTextHandler(io.Discard, nil)), Now: func() time.Time { return now }}
	a := r.Receive(context.Background(), headers(map[string]string{"X-Swarm-Delivery": "d", "X-Swarm-Signature": hex.EncodeToString(swarmevents.Sign(nil, []byte(body)))}), []byte(body))
	if a.Status != http.StatusServiceUnavailable {
		t.Fatalf("empty key: %+v, want 503", a)
	}
}

// A mismatch re-reads the secret once (it may have just rotated); nothing
// else does, and a second mismatch is the caller's.
func TestWithFreshKeys(t *testing.T) {
	unavailable := errors.New("secrets manager down")
	for _, tc := range []struct {
		name         string
		cached, read error // check's answer with the cached and the re-read secret
		want         error
		reads        int
	}{
		{"cached secret verifies", nil, nil, nil, 1},
		{"rotated: the re-read verifies", swarmevents.ErrBadSignature, nil, nil, 2},
		{"still a mismatch", swarmevents.ErrBadSignature, swarmevents.ErrBadSignature, swarmevents.ErrBadSignature, 2},
		{"secret unreadable: not read again", unavailable, nil, unavailable, 1},
		{"stale timestamp: not read again", swarmevents.ErrStaleTimestamp, nil, swarmevents.ErrStaleTimestamp, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reads := 0
			err := swarmevents.WithFreshKeys(func(fresh bool) error {
				reads++
				if fresh {
					return tc.read
				}
				return tc.cached
			})
			if !errors.Is(err, tc.want) || (tc.want == nil && err != nil) || reads != tc.reads {
				t.Fatalf("err %v after %d reads; want %v after %d", err, reads, tc.want, tc.reads)
			}
		})
	}
}
