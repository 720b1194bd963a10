package outcome

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/criticizer/criticizer/shared/awserr"
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/store"
)

// A finding kind is what "the same finding again" means for a team: its rule id,
// or its normalised title hashed (no model text stored), with its category,
// under a depot path scope. A kind dismissed often enough there by people with a
// say, and never accepted, is withheld there (Policy, WithheldBy), listed in the
// summary and reversible (Allow).

// Kind is f's kind: its rule id, else "title:" and a hash of its
// lower-cased, space-normalised title.
func Kind(f domain.Finding) string {
	if f.RuleID != "" {
		return f.RuleID
	}
	sum := sha256.Sum256([]byte(strings.Join(strings.Fields(strings.ToLower(f.Title)), " ")))
	return "title:" + hex.EncodeToString(sum[:8])
}

// SecretRulePrefix restates result.SecretRulePrefix so notify does not link the
// result package and its validator (repocheck.TestFunctionDeps);
// TestSecretRulePrefix keeps them equal.
const SecretRulePrefix = "secret/"

// committedSecret: a committed secret is always reported, whatever a team
// dismissed (issue 32).
func committedSecret(f domain.Finding) bool { return strings.HasPrefix(f.RuleID, SecretRulePrefix) }

// A tally counts a kind's outcomes under a scope, with who dismissed it:
//
//	pk  OUTCOME#kind#<scope>
//	sk  <category>#<kind>                         the counts (accepted, dismissed), allowed, confirmed
//	sk  <category>#<kind>#by#<review>#<fp>         one dismissal with standing: logins, review, date
//
// updated in the transaction that moves a record, so they agree, and read by one
// Query.
const (
	tallyPrefix  = "OUTCOME#kind#"
	dismissalSep = "#by#"
)

func tallyKey(scope, category, kind string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{"pk": sv(tallyPrefix + scope), "sk": sv(category + "#" + kind)}
}

func dismissalKey(scope, category, kind string, review int64, fp string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{"pk": sv(tallyPrefix + scope),
		"sk": sv(category + "#" + kind + dismissalSep + strconv.FormatInt(review, 10) + "#" + fp)}
}

// Suppression is one kind's tally under a scope. Dismissed counts every
// dismissal; Dismissals only those with standing, which alone can withhold it.
// The dynamodbav tags name the tally item's attributes, as the writes in
// store.go and flagTally spell them, so a renamed field cannot stop its read.
type Suppression struct {
	Scope     string `json:"scope" dynamodbav:"-"` // the partition's, not an attribute
	Category  string `json:"category" dynamodbav:"category"`
	Kind      string `json:"kind" dynamodbav:"kind"`
	Accepted  int64  `json:"accepted" dynamodbav:"accepted"`
	Dismissed int64  `json:"dismissed" dynamodbav:"dismissed"`
	// Allowed: an operator lifted the suppression (Allow); it stays lifted.
	Allowed bool `json:"allowed,omitempty" dynamodbav:"allowed"`
	// Confirmed: an operator confirmed it (Confirm; Policy.Confirm).
	Confirmed  bool        `json:"confirmed,omitempty" dynamodbav:"confirmed"`
	Dismissals []Dismissal `json:"dismissals,omitempty" dynamodbav:"-"` // items of their own
}

// Dismissal is who dismissed one finding of the kind, with standing; the
// dynamodbav tags name its item's attributes.
type Dismissal struct {
	Review      int64    `json:"review" dynamodbav:"review"`
	Fingerprint string   `json:"fp" dynamodbav:"fp"`
	By          []string `json:"by" dynamodbav:"by"`
	At          string   `json:"at" dynamodbav:"at"`
}

// Standing counts the dismissals with standing, and the distinct people and
// reviews behind them.
func (s Suppression) Standing() (count, people, reviews int) {
	who, where := map[string]bool{}, map[int64]bool{}
	for _, d := range s.Dismissals {
		for _, u := range d.By {
			who[u] = true
		}
		where[d.Review] = true
	}
	return len(s.Dismissals), len(who), len(where)
}

// Tallies returns the kinds counted under scope.
func (s *Store) Tallies(ctx context.Context, scope string) ([]Suppression, error) {
	items, err := store.Partition(ctx, s.api, s.table, tallyPrefix+scope, "outcome tallies")
	return tallies(items), err
}

// tallies folds the counts and dismissal items into one Suppression each.
func tallies(items []map[string]types.AttributeValue) []Suppression {
	by := map[string]*Suppression{}
	var order []string
	get := func(pk, key string) *Suppression {
		if t, ok := by[pk+"|"+key]; ok {
			return t
		}
		t := &Suppression{Scope: strings.TrimPrefix(pk, tallyPrefix)}
		by[pk+"|"+key] = t
		order = append(order, pk+"|"+key)
		return t
	}
	for _, it := range items {
		pk, sk := str(it["pk"]), str(it["sk"])
		key, _, isDismissal := strings.Cut(sk, dismissalSep)
		t := get(pk, key)
		// Both items are read by their tags.
		if isDismissal {
			var d Dismissal
			_ = attributevalue.UnmarshalMap(it, &d)
			t.Dismissals = append(t.Dismissals, d)
			continue
		}
		_ = attributevalue.UnmarshalMap(it, t)
	}
	out := make([]Suppression, 0, len(order))
	for _, k := range order {
		if t := by[k]; t.Kind != "" {
			out = append(out, *t)
		}
	}
	return out
}

// WithheldBy splits findings into kept and withheld by p; each scope's tallies
// are read once, and only for findings that could be withheld.
func (s *Store) WithheldBy(ctx context.Context, findings []domain.Finding, p Policy) (keep, withheld []domain.Finding, err error) {
	tallied := map[string]map[string]Suppression{} // scope → category#kind
	for _, f := range findings {
		sc := p.Scope(f.File)
		if _, read := tallied[sc]; read || p.NeverWithheld(f) || p.threshold(f) <= 0 {
			continue
		}
		ts, err := s.Tallies(ctx, sc)
		if err != nil {
			return nil, nil, err
		}
		tallied[sc] = map[string]Suppression{}
		for _, t := range ts {
			tallied[sc][t.Category+"#"+t.Kind] = t
		}
	}
	for _, f := range findings {
		t, ok := tallied[p.Scope(f.File)][f.Category+"#"+Kind(f)]
		if ok && p.Withholds(t, f) {
			withheld = append(withheld, f)
		} else {
			keep = append(keep, f)
		}
	}
	return keep, withheld, nil
}

// Allow lifts a kind's suppression under scope for good (the operator's
// `criticizer outcomes allow`); its tally is kept, so the lift is visible.
func (s *Store) Allow(ctx context.Context, scope, category, kind string) error {
	return s.flagTally(ctx, scope, category, kind, "allowed")
}

// Confirm makes a kind's suppression under scope apply where the policy
// waits for confirmation (DISMISS_CONFIRM; `criticizer outcomes confirm`).
func (s *Store) Confirm(ctx context.Context, scope, category, kind string) error {
	return s.flagTally(ctx, scope, category, kind, "confirmed")
}

func (s *Store) flagTally(ctx context.Context, scope, category, kind, flag string) error {
	values := map[string]types.AttributeValue{":t": &types.AttributeValueMemberBOOL{Value: true}, ":c": sv(category), ":k": sv(kind)}
	_, err := s.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: &s.table, Key: tallyKey(scope, category, kind),
		UpdateExpression: aws.String(s.keep("SET "+flag+" = :t, category = :c, kind = :k", values)), ExpressionAttributeValues: values})
	if err != nil {
		return awserr.Wrap("outcome "+flag, err)
	}
	return nil
}

// delta is how a fate's move changes a tally: +1/-1 accepted, dismissed.
func delta(from, to Fate) (acc, dis int64) {
	class := func(f Fate) (int64, int64) {
		switch {
		case f.Accepted():
			return 1, 0
		case f.Dismissive():
			return 0, 1
		}
		return 0, 0
	}
	a1, d1 := class(from)
	a2, d2 := class(to)
	return a2 - a1, d2 - d1
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// AllTallies scans every tally, for the operator's list of suppressions.
func AllTallies(ctx context.Context, api store.ScanAPI, table string) ([]Suppression, error) {
	items, err := store.ScanPrefix(ctx, api, table, tallyPrefix, "outcome tallies scan")
	if err != nil {
		return nil, err
	}
	return tallies(items), nil
}
