package digest_test

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/criticizer/criticizer/shared/delivery"
	"github.com/criticizer/criticizer/shared/digest"
	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/notify"
	"github.com/criticizer/criticizer/shared/outbox"
	"github.com/criticizer/criticizer/shared/outcome"
	"github.com/criticizer/criticizer/shared/recipients"
	"github.com/criticizer/criticizer/shared/store/dynamotest"
	"github.com/criticizer/criticizer/shared/weekly"
)

// sender records what it sent; fail decides each send's error.
type sender struct {
	sent []*notify.Message
	fail func() error
}

func (s *sender) Send(_ context.Context, m *notify.Message) (string, error) {
	if m.Key != (delivery.Key{}) {
		return "", errors.New("a digest was sent under a delivery key")
	}
	if s.fail != nil {
		if err := s.fail(); err != nil {
			return "", err
		}
	}
	s.sent = append(s.sent, m)
	return m.MessageID, nil
}

// evidence is the provider's record of accepted Message-IDs; nil: the
// channel has no lookup (DELIVERY_UNCONFIRMED, as smtpmail.Channel's).
type evidence map[string]bool

// channel is the digest's delivery.Channel over sender and evidence,
// classifying as the e-mail channels do (delivery.OutcomeVerdict).
type channel struct {
	*sender
	ev evidence
}

func (c *channel) Lookup(_ context.Context, m *notify.Message, _ int64) (string, bool, error) {
	if c.ev == nil {
		return "", false, failure.Errorf(failure.DeliveryUnconfirmed, "no lookup")
	}
	return m.MessageID, c.ev[m.MessageID], nil
}

func (c *channel) Classify(err error) delivery.Verdict {
	return delivery.OutcomeVerdict(err)
}

type clock struct{ t time.Time }

func (c *clock) Now() time.Time { return c.t }

func pass(t *testing.T, s *sender) (*digest.Pass, weekly.Week, *clock, *channel) {
	t.Helper()
	ctx := context.Background()
	db := dynamotest.New()
	w, _ := weekly.ParseWeek("2026-W47")
	entries := &weekly.Entries{API: db, Table: dynamotest.Table}
	for _, e := range week() {
		if err := entries.Record(ctx, w, e); err != nil {
			t.Fatal(err)
		}
	}
	// Another week's job is not this week's.
	if err := entries.Record(ctx, w.Previous(), weekly.Entry{JobID: "old", Dirs: []string{"//depot/engine/old"}}); err != nil {
		t.Fatal(err)
	}
	c := &clock{t: w.End().Add(2 * time.Hour)}
	owners, err := digest.Owners(map[string][]string{"//depot/engine/...": {"lead@example.com", "quiet@example.com"}}, []string{"lead@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	ch := &channel{sender: s}
	return &digest.Pass{Entries: entries, Fates: outcome.NewStore(db, dynamotest.Table), Rows: outbox.New(db, dynamotest.Table).WithActor("digest"),
		Channel: ch, Hash: testHash, Owners: owners, From: "Criticizer <criticizer@example.com>", Window: 10 * time.Minute,
		Now: job.Clock(c.Now), Log: slog.New(slog.DiscardHandler)}, w, c, ch
}

// testHash keys an owner's address as the deployed pass does, under a test
// delivery key.
var testHash = func() digest.Hasher {
	k, err := delivery.NewSecret(strings.Repeat("k", 32))
	if err != nil {
		panic(err)
	}
	return k.Recipient
}()

// A retried schedule sends nothing twice; an owner not opted in gets nothing.
func TestPassSendsOncePerOwnerAndWeek(t *testing.T) {
	s := &sender{}
	p, w, _, _ := pass(t, s)
	for run := 1; run <= 3; run++ {
		rep, err := p.Run(context.Background(), w)
		if err != nil {
			t.Fatal(err)
		}
		if run > 1 && (rep.Sent != 0 || rep.AlreadySent != 1) {
			t.Fatalf("run %d: %+v, want nothing sent again", run, rep)
		}
	}
	if len(s.sent) != 1 || s.sent[0].To != "lead@example.com" {
		t.Fatalf("sent %d digests, want 1 to the opted-in owner", len(s.sent))
	}
	m := s.sent[0]
	if !strings.HasPrefix(m.MessageID, "<digest.2026-W47.") || !strings.HasSuffix(m.MessageID, "@example.com>") || !strings.Contains(m.Text, "Reviews touching these paths: 2") {
		t.Fatalf("digest %s:\n%s", m.MessageID, m.Text)
	}
}

// A send that certainly failed is tried again by the next run; one whose
// outcome is unknown is not, until the provider's evidence settles it.
func TestPassSettlesBeforeResend(t *testing.T) {
	ctx := context.Background()
	s := &sender{fail: func() error { return failure.Errorf(failure.Upstream5xx, "451 try later") }}
	p, w, c, ch := pass(t, s)
	if rep, err := p.Run(ctx, w); err == nil || rep.Failed != 1 {
		t.Fatalf("first run = %+v, %v: want the failure reported", rep, err)
	}
	s.fail = func() error { return delivery.ErrOutcomeUnknown }
	if rep, err := p.Run(ctx, w); !errors.Is(err, digest.ErrInDoubt) || rep.InDoubt != 1 {
		t.Fatalf("second run = %+v, %v: want a send in doubt, and the run failed for it", rep, err)
	}
	s.fail = nil
	if rep, _ := p.Run(ctx, w); rep.InDoubt != 1 || len(s.sent) != 0 {
		t.Fatalf("without evidence a send in doubt was resent: %+v", rep)
	}
	ev := evidence{}
	ch.ev = ev
	if rep, _ := p.Run(ctx, w); rep.InDoubt != 1 || len(s.sent) != 0 {
		t.Fatalf("resent inside the window: %+v", rep)
	}
	c.t = c.t.Add(11 * time.Minute)
	if rep, err := p.Run(ctx, w); err != nil || rep.Sent != 1 || len(s.sent) != 1 {
		t.Fatalf("no evidence after the window: %+v, %v; want it sent once", rep, err)
	}
	ev[s.sent[0].MessageID] = true
	if rep, _ := p.Run(ctx, w); rep.Sent != 0 || rep.AlreadySent != 1 {
		t.Fatalf("after the send: %+v", rep)
	}
}

// A send refused for a reason that is not retried at once (a login the
// relay refuses) leaves the row to the next run: once the login is fixed,
// running the week again sends the digest, once.
func TestPassSendsARefusedDigestWhenRunAgain(t *testing.T) {
	ctx := context.Background()
	s := &sender{fail: func() error { return failure.Errorf(failure.AuthDenied, "535 authentication failed") }}
	p, w, _, _ := pass(t, s)
	if rep, err := p.Run(ctx, w); err == nil || rep.Failed != 1 {
		t.Fatalf("first run = %+v, %v: want the refusal reported", rep, err)
	}
	s.fail = nil
	for run := 2; run <= 3; run++ {
		rep, err := p.Run(ctx, w)
		if err != nil || len(s.sent) != 1 {
			t.Fatalf("run %d = %+v, %v, %d sent: want it sent once after the fix", run, rep, err, len(s.sent))
		}
	}
}

// A send in doubt that the provider did deliver is marked sent, not resent.
func TestPassMarksDeliveredInDoubt(t *testing.T) {
	ctx := context.Background()
	s := &sender{fail: func() error { return delivery.ErrOutcomeUnknown }}
	p, w, c, ch := pass(t, s)
	if _, err := p.Run(ctx, w); !errors.Is(err, digest.ErrInDoubt) {
		t.Fatalf("a run leaving a send in doubt = %v, want ErrInDoubt", err)
	}
	id := digest.IdentityOf("lead@example.com", w, testHash)
	ch.ev, s.fail = evidence{id.MessageID(p.From): true}, nil
	c.t = c.t.Add(time.Hour)
	for range 2 {
		if rep, err := p.Run(ctx, w); err != nil || rep.AlreadySent != 1 || len(s.sent) != 0 {
			t.Fatalf("run = %+v, %v: want it marked sent from the evidence, never resent", rep, err)
		}
	}
}

// A digest's row is the outbox row of its (week, owner): it lives the
// uniqueness retention past its send (for ever with 0).
func TestDigestRowIsTheOutboxRowOfItsWeek(t *testing.T) {
	ctx := context.Background()
	for _, ret := range []time.Duration{365 * 24 * time.Hour, 0} {
		s := &sender{}
		p, w, c, _ := pass(t, s)
		db := dynamotest.New()
		p.Entries.API, p.Fates = db, outcome.NewStore(db, dynamotest.Table)
		for _, e := range week() {
			if err := p.Entries.Record(ctx, w, e); err != nil {
				t.Fatal(err)
			}
		}
		p.Rows = outbox.New(db, dynamotest.Table).WithUniquenessRetention(ret)
		if rep, err := p.Run(ctx, w); err != nil || rep.Sent != 1 {
			t.Fatalf("run = %+v, %v", rep, err)
		}
		rows := partition(t, db, "DIGEST#sent#2026-W47")
		if len(rows) != 1 || rows[0]["status"].(*types.AttributeValueMemberS).Value != "sent" {
			t.Fatalf("rows %v: want the owner's one row, sent", rows)
		}
		exp, has := rows[0]["expires_at"].(*types.AttributeValueMemberN)
		want := strconv.FormatInt(c.t.Add(ret).Unix(), 10)
		if (ret > 0) != has || (has && exp.Value != want) {
			t.Errorf("retention %s: expires_at %v, want %s", ret, rows[0]["expires_at"], map[bool]string{true: want, false: "none"}[ret > 0])
		}
	}
}

// A crash between the send and its record (the mark never written) leaves
// the row sending: the next runs never resend it on a guess, and mark it
// sent once the provider's evidence shows it.
func TestPassCrashBetweenSendAndMark(t *testing.T) {
	ctx := context.Background()
	s := &sender{}
	p, w, c, ch := pass(t, s)
	rows := &crashingRows{Rows: p.Rows, crash: true}
	p.Rows = rows
	if rep, err := p.Run(ctx, w); err == nil || rep.Sent != 1 || len(s.sent) != 1 {
		t.Fatalf("first run = %+v, %v: want it sent and the lost mark reported", rep, err)
	}
	rows.crash = false
	c.t = c.t.Add(time.Hour) // past the window: only evidence holds a resend back
	ch.ev = nil
	if rep, err := p.Run(ctx, w); !errors.Is(err, digest.ErrInDoubt) || rep.InDoubt != 1 || len(s.sent) != 1 {
		t.Fatalf("without a lookup = %+v, %v, %d sent: want it left in doubt", rep, err, len(s.sent))
	}
	ch.ev = evidence{s.sent[0].MessageID: true}
	for range 2 {
		if rep, err := p.Run(ctx, w); err != nil || rep.AlreadySent != 1 || len(s.sent) != 1 {
			t.Fatalf("with evidence = %+v, %v, %d sent: want it marked sent, never resent", rep, err, len(s.sent))
		}
	}
}

// crashingRows loses every mark while crash holds: the function died after
// the provider accepted the digest.
type crashingRows struct {
	outbox.Rows
	crash bool
}

func (r *crashingRows) MarkSent(ctx context.Context, it outbox.Ref, evidence string, now time.Time) error {
	if !r.crash {
		return r.Rows.MarkSent(ctx, it, evidence, now)
	}
	return errors.New("function timed out")
}

func partition(t *testing.T, db interface {
	Query(context.Context, *dynamodb.QueryInput, ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error)
}, pk string) []map[string]types.AttributeValue {
	t.Helper()
	out, err := db.Query(context.Background(), &dynamodb.QueryInput{TableName: aws.String(dynamotest.Table), KeyConditionExpression: aws.String("pk = :pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": sv(pk)}})
	if err != nil {
		t.Fatal(err)
	}
	return out.Items
}

func sv(s string) types.AttributeValue { return &types.AttributeValueMemberS{Value: s} }

// reads counts the Fates reads a pass makes.
type reads struct {
	digest.Fates
	reviews, tallies int
}

func (r *reads) Review(ctx context.Context, review int64) ([]outcome.Record, error) {
	r.reviews++
	return r.Fates.Review(ctx, review)
}

func (r *reads) Tallies(ctx context.Context, scope string) ([]outcome.Suppression, error) {
	r.tallies++
	return r.Fates.Tallies(ctx, scope)
}

// Owners whose paths overlap share the pass's reads: each review's fates
// and each scope's tallies are read once per pass, not once per owner.
func TestPassReadsEachReviewOnce(t *testing.T) {
	p, w, _, _ := pass(t, &sender{})
	one := &reads{Fates: p.Fates}
	p.Fates = one
	if _, err := p.Run(context.Background(), w); err != nil {
		t.Fatal(err)
	}
	owners, err := digest.Owners(map[string][]string{"//depot/engine/...": {"lead@example.com", "quiet@example.com"}}, []string{"lead@example.com", "quiet@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	two := &reads{Fates: one.Fates}
	p.Fates, p.Owners = two, owners
	if _, err := p.Run(context.Background(), w); err != nil {
		t.Fatal(err)
	}
	if one.reviews == 0 || two.reviews != one.reviews || two.tallies != one.tallies {
		t.Fatalf("two owners read %d reviews and %d tallies, one owner %d and %d: want the same", two.reviews, two.tallies, one.reviews, one.tallies)
	}
}

// An owner outside the recipient policy (RECIPIENT_DOMAINS) is refused:
// no digest, no row, counted in the report; one inside it is sent hers.
func TestPassRefusesAnOwnerOutsideTheRecipientPolicy(t *testing.T) {
	for _, tc := range []struct {
		domain        string
		sent, refused int
	}{{"studio.test", 0, 1}, {"example.com", 1, 0}} {
		t.Run(tc.domain, func(t *testing.T) {
			s := &sender{}
			p, w, _, _ := pass(t, s)
			pol, err := recipients.Parse([]string{tc.domain}, 10)
			if err != nil {
				t.Fatal(err)
			}
			p.Policy = pol
			rep, err := p.Run(context.Background(), w)
			if err != nil || len(s.sent) != tc.sent || rep.Refused != tc.refused {
				t.Fatalf("policy %s: %+v (%v), %d sent; want %d sent, %d refused", tc.domain, rep, err, len(s.sent), tc.sent, tc.refused)
			}
		})
	}
}
