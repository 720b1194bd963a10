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

// A kind dismissed DismissThreshold times under a scope, never accepted,
// is withheld there (not elsewhere, not a committed secret), and an
// operator's Allow lifts it; one acceptance keeps it reported.
func TestWithheldAfterRepeatedDismissals(t *testing.T) {
	ctx := context.Background()
	st := outcome.NewStore(dynamotest.New(), dynamotest.Table)
	todo := domain.Finding{RuleID: "standin.todo", Category: "maintainability", Title: "TODO left in code", File: "//depot/projectA/src/log.c"}
	secret := domain.Finding{RuleID: result.SecretRulePrefix + "aws-key", Category: "security", Title: "Committed secret", File: "//depot/projectA/src/cfg.c"}
	elsewhere := todo
	elsewhere.File = "//depot/projectB/log.c"
	dismiss := func(review int64, f domain.Finding, fate outcome.Fate) {
		t.Helper()
		rec := outcome.Record{Review: review, Fingerprint: fmt.Sprint("fp", review), File: f.File, Category: f.Category, Kind: outcome.Kind(f)}
		if _, err := st.Posted(ctx, rec); err != nil {
			t.Fatal(err)
		}
		rec.Fate = outcome.Open
		if w, err := st.ChangeFate(ctx, rec, fate); err != nil || !w {
			t.Fatalf("judge: %v %v", w, err)
		}
		if w, _ := st.ChangeFate(ctx, rec, fate); w {
			t.Fatal("the same move judged twice")
		}
	}
	withheld := func() []domain.Finding {
		t.Helper()
		_, w, err := st.WithheldHere(ctx, []domain.Finding{todo, secret, elsewhere})
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	for i := int64(1); i < outcome.DismissThreshold; i++ {
		dismiss(i, todo, outcome.Dismissed)
		dismiss(100+i, secret, outcome.Disliked)
	}
	if w := withheld(); len(w) != 0 {
		t.Fatalf("withheld below the threshold: %+v", w)
	}
	dismiss(outcome.DismissThreshold, todo, outcome.Disliked)
	dismiss(100+outcome.DismissThreshold, secret, outcome.Disliked)
	if w := withheld(); len(w) != 1 || w[0] != todo {
		t.Fatalf("withheld = %+v, want only the TODO under //depot/projectA/... (never the secret, never another scope)", w)
	}
	if err := st.Allow(ctx, outcome.Scope(todo.File), todo.Category, outcome.Kind(todo)); err != nil {
		t.Fatal(err)
	}
	if w := withheld(); len(w) != 0 {
		t.Fatalf("withheld after Allow: %+v", w)
	}
}

func TestOneAcceptanceKeepsAKindReported(t *testing.T) {
	ctx := context.Background()
	st := outcome.NewStore(dynamotest.New(), dynamotest.Table)
	f := domain.Finding{Category: "bug", Title: "Null  dereference", File: "//depot/p/a/b.c"}
	for i := int64(1); i <= outcome.DismissThreshold+1; i++ {
		rec := outcome.Record{Review: i, Fingerprint: "fp", File: f.File, Category: f.Category, Kind: outcome.Kind(f), Fate: outcome.Open}
		if _, err := st.Posted(ctx, rec); err != nil {
			t.Fatal(err)
		}
		fate := outcome.Dismissed
		if i == 1 {
			fate = outcome.Addressed
		}
		if _, err := st.ChangeFate(ctx, rec, fate); err != nil {
			t.Fatal(err)
		}
	}
	same := domain.Finding{Category: "bug", Title: "null dereference", File: "//depot/p/a/c.c"} // the same kind: title normalised
	if _, w, err := st.WithheldHere(ctx, []domain.Finding{same}); err != nil || len(w) != 0 {
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
	for _, tt := range []struct {
		name      string
		retention time.Duration
		expires   bool
	}{{"default retention", -1, true}, {"kept forever", 0, false}} {
		t.Run(tt.name, func(t *testing.T) {
			db := dynamotest.New()
			st := outcome.NewStore(db, dynamotest.Table).WithUniquenessRetention(tt.retention)
			rec := outcome.Record{Review: 1, Fingerprint: "fp", File: f.File, Category: f.Category, Kind: outcome.Kind(f), Fate: outcome.Open}
			if _, err := st.Posted(ctx, rec); err != nil {
				t.Fatal(err)
			}
			if _, err := st.ChangeFate(ctx, rec, outcome.Dismissed); err != nil {
				t.Fatal(err)
			}
			if err := st.Allow(ctx, outcome.Scope(f.File), f.Category, outcome.Kind(f)); err != nil {
				t.Fatal(err)
			}
			out, err := db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(dynamotest.Table), Key: map[string]types.AttributeValue{
				"pk": &types.AttributeValueMemberS{Value: "OUTCOME#kind#" + outcome.Scope(f.File)},
				"sk": &types.AttributeValueMemberS{Value: f.Category + "#" + outcome.Kind(f)}}})
			if err != nil || out.Item == nil {
				t.Fatalf("tally: %v %v", out, err)
			}
			if _, has := out.Item["expires_at"]; has != tt.expires {
				t.Fatalf("tally has expires_at: %v, want %v", has, tt.expires)
			}
		})
	}
}
