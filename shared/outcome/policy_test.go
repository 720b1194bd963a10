package outcome_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/criticizer/criticizer/shared/config"
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/outcome"
	"github.com/criticizer/criticizer/shared/result"
	"github.com/criticizer/criticizer/shared/store/dynamotest"
)

// The noise filter under a Policy: the environment's N and scope depth,
// and a rules file's own N (0: off) for its paths. A committed secret is
// never withheld, whatever N; nor is a finding at or above the gate.
func TestWithheldByPolicy(t *testing.T) {
	style := domain.Finding{ID: "f1", RuleID: "standin.shell", Category: "style", Severity: "low", File: "//depot/game/engine/net/a.py"}
	sibling := style // another directory under //depot/game/
	sibling.ID, sibling.File = "f2", "//depot/game/tools/b.py"
	secret := domain.Finding{ID: "f3", RuleID: result.SecretRulePrefix + "aws-key", Category: "style", Severity: "low", File: "//depot/game/engine/k.c"}
	gated := style
	gated.ID, gated.Severity = "f4", "medium"
	env := func(kv ...string) outcome.Policy {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return outcome.PolicyFromEnv(config.NewReaderFrom(m))
	}
	rules := func(p outcome.Policy, n int) outcome.Policy {
		return p.WithRules(domain.ReviewMeta{SuppressAfter: map[string]int{"f1": n, "f2": n, "f4": n}})
	}
	cases := []struct {
		name       string
		post       outcome.Policy // the policy the dismissals were recorded under (its depth)
		dismissals int
		p          outcome.Policy
		want       []string // IDs withheld
	}{
		{"default N=3, not yet", env(), 2, env(), nil},
		{"default N=3 reached: the whole first directory", env(), 3, env(), []string{"f1", "f2", "f4"}},
		{"environment N=2", env(), 2, env("DISMISS_THRESHOLD", "2"), []string{"f1", "f2", "f4"}},
		{"gate medium: the medium one is posted", env(), 3, env("SWARM_GATE_SEVERITY", "medium"), []string{"f1", "f2"}},
		{"depth 2: only the directory dismissed in", env("DISMISS_SCOPE_DEPTH", "2"), 3, env("DISMISS_SCOPE_DEPTH", "2"), []string{"f1", "f4"}},
		{"rules turn it off", env(), 5, rules(env(), 0), nil},
		{"rules raise N", env(), 3, rules(env(), 4), nil},
		{"rules lower N", env(), 2, rules(env(), 2), []string{"f1", "f2", "f4"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			st := outcome.NewStore(dynamotest.New(), dynamotest.Table)
			for i := 1; i <= tc.dismissals; i++ {
				for j, f := range []domain.Finding{style, secret} {
					rec := outcome.Record{Review: int64(i), Fingerprint: fmt.Sprint("fp", j), File: f.File, Category: f.Category, Kind: outcome.Kind(f), Scope: tc.post.Scope(f.File)}
					if _, err := st.Posted(ctx, rec); err != nil {
						t.Fatal(err)
					}
					rec.Fate = outcome.Open
					if _, err := st.ChangeFate(ctx, rec, outcome.Disliked, []string{[]string{"alice", "bob"}[i%2]}); err != nil {
						t.Fatal(err)
					}
				}
			}
			_, withheld, err := st.WithheldBy(ctx, []domain.Finding{style, sibling, secret, gated}, tc.p)
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

// Standing: the people who may decide on the review; never the service
// or a configured bot, even when Swarm lists them.
func TestStanding(t *testing.T) {
	p := outcome.PolicyFromEnv(config.NewReaderFrom(map[string]string{"DISMISS_BOT_LOGINS": "lintbot"}))
	got := p.Standing([]string{"alice", "carol", "criticizer", "lintbot", "bob"}, "criticizer", []string{"alice", "bob", "lintbot", "criticizer"})
	if fmt.Sprint(got) != "[alice bob]" {
		t.Fatalf("standing %v, want alice and bob (deciders), not carol, the bot or the service", got)
	}
}

// The precedence: what people did outranks what anyone said, and a
// retraction withdraws a dismissal whenever it is read.
func TestDecide(t *testing.T) {
	for _, tc := range []struct {
		recorded outcome.Fate
		now      outcome.Verdict
		want     outcome.Fate
	}{
		{outcome.Addressed, outcome.Verdict{Fate: outcome.Dismissed}, outcome.Addressed},
		{outcome.Resolved, outcome.Verdict{Fate: outcome.Disliked}, outcome.Resolved},
		{outcome.Liked, outcome.Verdict{Fate: outcome.Archived}, outcome.Liked},
		{outcome.Dismissed, outcome.Verdict{Fate: outcome.Addressed}, outcome.Addressed},
		{outcome.Dismissed, outcome.Verdict{Fate: outcome.Open, Retracted: true}, outcome.Open},
		{outcome.Dismissed, outcome.Verdict{Fate: outcome.Open}, outcome.Dismissed},
		{outcome.Archived, outcome.Verdict{Fate: outcome.Open, Retracted: true}, outcome.Archived},
		{outcome.Withheld, outcome.Verdict{Fate: outcome.Open}, outcome.Withheld},
		{outcome.Open, outcome.Verdict{Fate: outcome.Dismissed}, outcome.Dismissed},
	} {
		if got := outcome.Decide(tc.recorded, tc.now); got != tc.want {
			t.Errorf("Decide(%s, %+v) = %s, want %s", tc.recorded, tc.now, got, tc.want)
		}
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
