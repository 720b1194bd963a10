package outcome_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/outcome"
	"github.com/criticizer/criticizer/shared/result"
	"github.com/criticizer/criticizer/shared/store/dynamotest"
)

// judge records f posted on review as fp, then moved to fate with who
// stands dismissing it (people with a say).
func judge(t *testing.T, st *outcome.Store, review int64, fp string, f domain.Finding, fate outcome.Fate, by ...string) {
	t.Helper()
	ctx := context.Background()
	rec := outcome.Record{Review: review, Fingerprint: fp, File: f.File, Category: f.Category, Kind: outcome.Kind(f), Scope: outcome.DefaultPolicy().Scope(f.File)}
	if _, err := st.Posted(ctx, rec); err != nil {
		t.Fatal(err)
	}
	rec.Fate = outcome.Open
	if w, err := st.ChangeFate(ctx, rec, fate, by); err != nil || !w {
		t.Fatalf("judge: %v %v", w, err)
	}
	rec.Fate, rec.By = fate, by
	if w, _ := st.ChangeFate(ctx, rec, fate, by); w {
		t.Fatal("the same move judged twice")
	}
}

// Only dismissals by people with a say count toward withholding, and
// they must come from two people across two reviews: one person's
// replies on many reviews, or many people on one review, withhold
// nothing; the author on one review and a reviewer on another do.
// Whatever was dismissed, a finding at or above the floor (high, no gate
// set), a security finding and a committed secret are posted; an
// operator's Allow lifts the suppression.
func TestStandingWithholds(t *testing.T) {
	ctx := context.Background()
	todo := domain.Finding{ID: "t", RuleID: "standin.todo", Category: "maintainability", Severity: "medium", Title: "TODO left in code", File: "//depot/projectA/src/log.c"}
	critical := todo
	critical.ID, critical.Severity = "c", "critical"
	security := todo
	security.ID, security.Category = "s", "security"
	secret := todo
	secret.ID, secret.RuleID = "k", result.SecretRulePrefix+"aws-key"
	elsewhere := todo
	elsewhere.ID, elsewhere.File = "e", "//depot/projectB/log.c"
	pol := outcome.DefaultPolicy()
	withheld := func(st *outcome.Store) []string {
		t.Helper()
		_, w, err := st.WithheldBy(ctx, []domain.Finding{todo, critical, security, secret, elsewhere}, pol)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, f := range w {
			ids = append(ids, f.ID)
		}
		return ids
	}
	cases := []struct {
		name string
		by   [][2]string // review, login ("" : no say)
		want []string
	}{
		{"one non-participant's three replies", [][2]string{{"1", ""}, {"2", ""}, {"3", ""}}, nil},
		{"one person with a say on three reviews", [][2]string{{"1", "alice"}, {"2", "alice"}, {"3", "alice"}}, nil},
		{"two people on one review", [][2]string{{"1", "alice"}, {"1", "bob"}, {"1", "alice"}}, nil},
		{"author and a reviewer across two reviews", [][2]string{{"1", "alice"}, {"2", "bob"}, {"2", "alice"}}, []string{"t"}},
		{"below N", [][2]string{{"1", "alice"}, {"2", "bob"}}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st := outcome.NewStore(dynamotest.New(), dynamotest.Table)
			for i, d := range tc.by {
				var by []string
				if d[1] != "" {
					by = []string{d[1]}
				}
				var review int64
				fmt.Sscan(d[0], &review)
				judge(t, st, review, fmt.Sprint("fp", i), todo, outcome.Dismissed, by...)
			}
			got := withheld(st)
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Fatalf("withheld %v, want %v", got, tc.want)
			}
			if len(got) > 0 {
				if err := st.Allow(ctx, pol.Scope(todo.File), todo.Category, outcome.Kind(todo)); err != nil {
					t.Fatal(err)
				}
				if w := withheld(st); len(w) != 0 {
					t.Fatalf("withheld after Allow: %v", w)
				}
			}
		})
	}
}

// Under DISMISS_CONFIRM a suppression that would apply waits for an
// operator's Confirm.
func TestConfirmBeforeWithholding(t *testing.T) {
	ctx := context.Background()
	st := outcome.NewStore(dynamotest.New(), dynamotest.Table)
	f := domain.Finding{RuleID: "r", Category: "style", Severity: "low", File: "//depot/p/a.c"}
	for i, who := range []string{"alice", "bob", "alice"} {
		judge(t, st, int64(i+1), "fp", f, outcome.Dismissed, who)
	}
	pol := outcome.DefaultPolicy()
	pol.Confirm = true
	ts, _ := st.Tallies(ctx, pol.Scope(f.File))
	if len(ts) != 1 || pol.Active(ts[0]) || !pol.Awaiting(ts[0]) {
		t.Fatalf("tally %+v: want awaiting confirmation, not active", ts)
	}
	if _, w, _ := st.WithheldBy(ctx, []domain.Finding{f}, pol); len(w) != 0 {
		t.Fatal("withheld before confirmation")
	}
	if err := st.Confirm(ctx, pol.Scope(f.File), f.Category, outcome.Kind(f)); err != nil {
		t.Fatal(err)
	}
	if _, w, _ := st.WithheldBy(ctx, []domain.Finding{f}, pol); len(w) != 1 {
		t.Fatal("not withheld once confirmed")
	}
	ts, _ = st.Tallies(ctx, pol.Scope(f.File))
	if n, people, reviews := ts[0].Standing(); n != 3 || people != 2 || reviews != 3 || ts[0].Dismissals[0].At == "" {
		t.Fatalf("dismissals %+v: want who, where and when of each", ts[0].Dismissals)
	}
}

func TestOneAcceptanceKeepsAKindReported(t *testing.T) {
	ctx := context.Background()
	st := outcome.NewStore(dynamotest.New(), dynamotest.Table)
	f := domain.Finding{Category: "bug", Severity: "low", Title: "Null  dereference", File: "//depot/p/a/b.c"}
	judge(t, st, 1, "fp", f, outcome.Addressed)
	for i, who := range []string{"alice", "bob", "alice", "bob"} {
		judge(t, st, int64(i+2), "fp", f, outcome.Dismissed, who)
	}
	same := domain.Finding{Category: "bug", Severity: "low", Title: "null dereference", File: "//depot/p/a/c.c"} // the same kind: title normalised
	if _, w, err := st.WithheldBy(ctx, []domain.Finding{same}, outcome.DefaultPolicy()); err != nil || len(w) != 0 {
		t.Fatalf("withheld %+v, %v: a kind once accepted stays reported", w, err)
	}
}

func TestSecretRulePrefix(t *testing.T) {
	if outcome.SecretRulePrefix != result.SecretRulePrefix {
		t.Fatalf("outcome.SecretRulePrefix %q, review's %q", outcome.SecretRulePrefix, result.SecretRulePrefix)
	}
}

// A kind's tally expires with the uniqueness retention (refreshed by each
// move and by Allow), and only when that retention keeps records forever
// has it no expires_at: the retention check (RT-3) would otherwise find
// every tally a row that lives forever.
func TestTallyExpiresWithTheRecords(t *testing.T) {
	ctx := context.Background()
	f := domain.Finding{RuleID: "standin.todo", Category: "maintainability", File: "//depot/projectA/src/log.c"}
	scope := outcome.DefaultPolicy().Scope(f.File)
	for _, tt := range []struct {
		name      string
		retention time.Duration
		expires   bool
	}{{"default retention", -1, true}, {"kept forever", 0, false}} {
		t.Run(tt.name, func(t *testing.T) {
			db := dynamotest.New()
			st := outcome.NewStore(db, dynamotest.Table).WithUniquenessRetention(tt.retention)
			judge(t, st, 1, "fp", f, outcome.Dismissed, "alice")
			if err := st.Allow(ctx, scope, f.Category, outcome.Kind(f)); err != nil {
				t.Fatal(err)
			}
			for _, sk := range []string{f.Category + "#" + outcome.Kind(f), f.Category + "#" + outcome.Kind(f) + "#by#1#fp"} {
				out, err := db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(dynamotest.Table), Key: map[string]types.AttributeValue{
					"pk": &types.AttributeValueMemberS{Value: "OUTCOME#kind#" + scope}, "sk": &types.AttributeValueMemberS{Value: sk}}})
				if err != nil || out.Item == nil {
					t.Fatalf("tally item %s: %v %v", sk, out, err)
				}
				if _, has := out.Item["expires_at"]; has != tt.expires {
					t.Fatalf("%s has expires_at: %v, want %v", sk, has, tt.expires)
				}
			}
		})
	}
}
