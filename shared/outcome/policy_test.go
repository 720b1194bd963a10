package outcome_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/outcome"
	"github.com/criticizer/criticizer/shared/result"
	"github.com/criticizer/criticizer/shared/store/dynamotest"
)

// The noise filter under a Policy: the environment's N and scope depth,
// and a rules file's own N (0: off) for its paths. A committed secret is
// never withheld, whatever N.
func TestWithheldByPolicy(t *testing.T) {
	shell := domain.Finding{ID: "f1", RuleID: "standin.shell", Category: "security", File: "//depot/game/engine/net/a.py"}
	sibling := shell // another directory under //depot/game/
	sibling.ID, sibling.File = "f2", "//depot/game/tools/b.py"
	secret := domain.Finding{ID: "f3", RuleID: result.SecretRulePrefix + "aws-key", Category: "security", File: "//depot/game/engine/k.c"}
	rulesN := func(n int) func(domain.Finding) (int, bool) {
		return func(domain.Finding) (int, bool) { return n, true }
	}
	cases := []struct {
		name       string
		post       outcome.Policy // the policy the dismissals were recorded under (its depth)
		dismissals int
		p          outcome.Policy
		want       []string // IDs withheld
	}{
		{"default N=3, not yet", outcome.Policy{}, 2, outcome.Policy{}, nil},
		{"default N=3 reached: the whole first directory", outcome.Policy{}, 3, outcome.Policy{}, []string{"f1", "f2"}},
		{"environment N=2", outcome.Policy{}, 2, outcome.Policy{Threshold: 2}, []string{"f1", "f2"}},
		{"depth 2: only the directory dismissed in", outcome.Policy{Depth: 2}, 3, outcome.Policy{Depth: 2}, []string{"f1"}},
		{"rules turn it off", outcome.Policy{}, 5, outcome.Policy{For: rulesN(0)}, nil},
		{"rules raise N", outcome.Policy{}, 3, outcome.Policy{For: rulesN(4)}, nil},
		{"rules lower N", outcome.Policy{}, 1, outcome.Policy{For: rulesN(1)}, []string{"f1", "f2"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			st := outcome.NewStore(dynamotest.New(), dynamotest.Table)
			for i := 1; i <= tc.dismissals; i++ {
				for j, f := range []domain.Finding{shell, secret} {
					rec := outcome.Record{Review: int64(i), Fingerprint: fmt.Sprint("fp", j), File: f.File, Category: f.Category, Kind: outcome.Kind(f), Scope: tc.post.Scope(f.File)}
					if _, err := st.Posted(ctx, rec); err != nil {
						t.Fatal(err)
					}
					rec.Fate = outcome.Open
					if _, err := st.ChangeFate(ctx, rec, outcome.Disliked); err != nil {
						t.Fatal(err)
					}
				}
			}
			_, withheld, err := st.WithheldBy(ctx, []domain.Finding{shell, sibling, secret}, tc.p)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range withheld {
				got = append(got, f.ID)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("withheld %v, want %v", got, tc.want)
			}
		})
	}
}

func TestScopeAt(t *testing.T) {
	for _, tc := range []struct {
		depth int
		want  string
	}{{1, "//depot/game/..."}, {2, "//depot/game/engine/..."}, {9, "//depot/game/engine/net/..."}} {
		if got := outcome.ScopeAt("//depot/game/engine/net/a.py", tc.depth); got != tc.want {
			t.Errorf("ScopeAt(%d) = %s, want %s", tc.depth, got, tc.want)
		}
	}
}
