package outcome

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/criticizer/criticizer/shared/awserr"
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/store"
)

// A finding kind is what "the same finding again" means for a team: its
// rule id, or (a model's finding without one) its normalised title,
// hashed so no model text is stored; with its category, under a depot path
// scope. Reviewers who dismiss a kind under a scope DismissThreshold times
// and never accept it have it withheld there (WithheldHere), listed in the
// review summary and reversible (Allow).

// DismissThreshold is N: the dismissals, with no acceptance, after which a
// kind is withheld under its scope.
const DismissThreshold = 3

// ScopeDepth is how many directory levels of a depot path make a scope:
// //depot/projectA/... for //depot/projectA/src/net/copy.c.
const ScopeDepth = 2

// Kind is f's kind: its rule id, else "title:" and a hash of its
// lower-cased, space-normalised title.
func Kind(f domain.Finding) string {
	if f.RuleID != "" {
		return f.RuleID
	}
	sum := sha256.Sum256([]byte(strings.Join(strings.Fields(strings.ToLower(f.Title)), " ")))
	return "title:" + hex.EncodeToString(sum[:8])
}

// Scope is the depot path pattern a finding on file counts under.
func Scope(file string) string { return PathGroup(file, ScopeDepth) }

// SecretRulePrefix is result.SecretRulePrefix, the rule id prefix of a
// committed-secret finding, restated so the notify function does not link
// the result package and its schema validator (repocheck.TestFunctionDeps);
// TestSecretRulePrefix keeps the two equal.
const SecretRulePrefix = "secret/"

// committedSecret: a committed secret is always reported, whatever a team
// dismissed (issue 32).
func committedSecret(f domain.Finding) bool { return strings.HasPrefix(f.RuleID, SecretRulePrefix) }

// A tally item counts a kind's outcomes under a scope:
//
//	pk  OUTCOME#kind#<scope>
//	sk  <category>#<kind>
//
// updated in one transaction with the record whose fate moved, so it
// agrees with the records.
const tallyPrefix = "OUTCOME#kind#"

func tallyKey(scope, category, kind string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{"pk": sv(tallyPrefix + scope), "sk": sv(category + "#" + kind)}
}

// Suppression is one kind's tally under a scope.
type Suppression struct {
	Scope     string `json:"scope"`
	Category  string `json:"category"`
	Kind      string `json:"kind"`
	Accepted  int64  `json:"accepted"`
	Dismissed int64  `json:"dismissed"`
	// Allowed: an operator lifted the suppression (Allow); it stays lifted.
	Allowed bool `json:"allowed,omitempty"`
}

// Active reports whether the kind is withheld under its scope.
func (s Suppression) Active() bool {
	return !s.Allowed && s.Accepted == 0 && s.Dismissed >= DismissThreshold
}

// Tallies returns the kinds counted under scope.
func (s *Store) Tallies(ctx context.Context, scope string) ([]Suppression, error) {
	items, err := s.partitionItems(ctx, tallyPrefix+scope, "outcome tallies")
	return tallies(items), err
}

func tallies(items []map[string]types.AttributeValue) []Suppression {
	var out []Suppression
	for _, it := range items {
		out = append(out, decodeTally(it))
	}
	return out
}

func decodeTally(it map[string]types.AttributeValue) Suppression {
	acc, _ := num(it["accepted"])
	dis, _ := num(it["dismissed"])
	allowed, _ := it["allowed"].(*types.AttributeValueMemberBOOL)
	return Suppression{Scope: strings.TrimPrefix(str(it["pk"]), tallyPrefix), Category: str(it["category"]), Kind: str(it["kind"]),
		Accepted: acc, Dismissed: dis, Allowed: allowed != nil && allowed.Value}
}

// WithheldHere splits findings into those to report and those withheld
// as repeatedly dismissed under their scope. Committed secrets are never
// withheld. Each scope's tallies are read once.
func (s *Store) WithheldHere(ctx context.Context, findings []domain.Finding) (keep, withheld []domain.Finding, err error) {
	return s.WithheldBy(ctx, findings, Policy{})
}

// Allow lifts a kind's suppression under scope for good (the operator's
// `criticizer outcomes allow`); its tally is kept, so the lift is visible.
func (s *Store) Allow(ctx context.Context, scope, category, kind string) error {
	values := map[string]types.AttributeValue{":t": &types.AttributeValueMemberBOOL{Value: true}, ":c": sv(category), ":k": sv(kind)}
	_, err := s.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: &s.table, Key: tallyKey(scope, category, kind),
		UpdateExpression: aws.String(s.keep("SET allowed = :t, category = :c, kind = :k", values)), ExpressionAttributeValues: values})
	if err != nil {
		return awserr.Wrap("outcome allow", err)
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

// AllTallies reads every kind's tally (a scan for OUTCOME#kind# items, every
// page), for the operator's list of suppressions.
func AllTallies(ctx context.Context, api store.ScanAPI, table string) ([]Suppression, error) {
	items, err := scanPrefix(ctx, api, table, tallyPrefix, "outcome tallies scan")
	if err != nil {
		return nil, err
	}
	return tallies(items), nil
}
