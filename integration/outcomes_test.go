//go:build integration

package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	swarmstandin "github.com/criticizer/criticizer/internal/standin/swarm"
	"github.com/criticizer/criticizer/shared/obs"
	"github.com/criticizer/criticizer/shared/outcome"
	"github.com/criticizer/criticizer/shared/swarm"
)

// TestReviewerOutcomesAcceptance is issue 32's acceptance (outcomes and the
// noise filter): the findings of a review's version 1 are addressed,
// disliked and replied to in the Swarm stand-in; the sweeper's pass, run
// twice, records each fate once; the acceptance report shows them by prompt
// version and category; a top-level comment at a finding's line is no
// reply; the next review there still reports the security kind and the
// committed secret however often they were dismissed (never withheld; the
// withholding itself is TestReactionsOnlyDecidersWithhold's).
func TestReviewerOutcomesAcceptance(t *testing.T) {
	ctx := context.Background()
	dir := fmt.Sprintf("//depot/projectA/outcomes%d/", time.Now().UnixNano()%1e6)
	const shell = "import subprocess\n\ndef run(cmd):\n    subprocess.call(cmd, shell=True)\n"
	const key = "#include <stdio.h>\n\nconst char *key = \"AKIAQX7N3PLV2KD5RTWE\";\n"
	files := map[string]string{
		dir + "copy.c": copyV1, dir + "log.c": logC,
		dir + "a.py": shell, dir + "b.py": shell, dir + "c.py": shell,
		dir + "k1.c": key, dir + "k2.c": key, dir + "k3.c": key,
	}
	// Later tests under //depot/projectA/..., and this one run again
	// (-count=2), see the tallies as they were: an `outcomes allow` here
	// would lift the shell kind there for good, and the next run would
	// find it never withheld.
	restoreTallies(ctx, t, "//depot/projectA/...")
	cl := reviewVersionChange(t, files)
	review := cl + 1
	runVersion(t, review, cl, 1)

	byFile := map[string][]swarmstandin.Comment{}
	for _, c := range ourComments(t, review) {
		if c.Context != nil {
			byFile[strings.TrimPrefix(c.Context.File, dir)] = append(byFile[strings.TrimPrefix(c.Context.File, dir)], c)
		}
	}
	one := func(name string) swarmstandin.Comment {
		t.Helper()
		if len(byFile[name]) != 1 {
			t.Fatalf("version 1: %d comments on %s, want 1 (all: %v)", len(byFile[name]), name, byFile)
		}
		return byFile[name][0]
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	// What the reviewers do, as in Swarm's UI; copy.c is archived first
	// and addressed after the first read below (a flip of class).
	must(env.local.Swarm.Archive(one("copy.c").ID))
	_, err := env.local.Swarm.Dislike(one("a.py").ID, "alice")
	must(err)
	_, err = env.local.Swarm.Reply(one("b.py").ID, "alice", "False positive: cmd is a constant here.", true)
	must(err)
	_, err = env.local.Swarm.Reply(one("c.py").ID, "bob", "won't fix", false) // no context.comment: a top-level comment, no reply
	must(err)
	secrets := 0
	for _, k := range []string{"k1.c", "k2.c", "k3.c"} {
		for _, c := range byFile[k] {
			_, err := env.local.Swarm.Dislike(c.ID, "alice")
			must(err)
			if strings.Contains(c.Body, "Committed secret") {
				secrets++
			}
		}
	}
	if secrets != 3 {
		t.Fatalf("version 1: %d committed-secret comments, want 3", secrets)
	}

	// A read of this review alone, as the sweeper reads each review it
	// watches: the first judges the fates and tells the acceptance
	// metrics; then copy.c, archived, is addressed, and the next read tells
	// that flip; a read after it changes nothing and tells nothing. Read
	// alone, because a sweeper pass reads every watched review, other
	// tests' too, and would tell their fates into the same count.
	table := env.out["JobsTableName"]
	var emitted bytes.Buffer // the acceptance metric, as the store writes it (EMF)
	client := &swarm.Client{BaseURL: env.local.Swarm.URL(), Credentials: func(context.Context, bool) (swarm.Credentials, error) {
		return swarm.Credentials{User: "criticizer", Ticket: env.local.Secrets["Swarm API ticket"]}, nil
	}}
	told := &outcome.Reader{Store: outcome.NewStore(env.ddb, table).WithMetrics(obs.NewMetrics(&emitted, "local")), Rows: env.outbox, Comments: client}
	if _, err := told.Read(ctx, review, nil); err != nil {
		t.Fatal(err)
	}
	if emitted.Len() == 0 {
		t.Fatal("reading the review judged fates and told the acceptance metrics nothing")
	}
	must(env.local.Swarm.Address(one("copy.c").ID))
	if flip, err := told.Read(ctx, review, nil); err != nil || flip.FatesChanged != 1 {
		t.Fatalf("the read after copy.c was addressed changed %d fates (err %v): want its flip from archived", flip.FatesChanged, err)
	}
	once := emitted.Len()
	if again, err := told.Read(ctx, review, nil); err != nil || again.FatesChanged != 0 || emitted.Len() != once {
		t.Errorf("a second read of the review changed %d fates and told %q (err %v): want nothing", again.FatesChanged, emitted.Bytes()[once:], err)
	}

	// The sweeper's pass, a day on (the notify stage watched the review),
	// then again at its next read: each fate is recorded once.
	st := outcome.NewStore(env.ddb, table)
	now := time.Now().Add(25 * time.Hour)
	pass := &outcome.Pass{Store: st, Reader: &outcome.Reader{Store: st, Rows: env.outbox, Comments: client}, Limit: 1000,
		Now: func() time.Time { return now }, Log: env.quiet}
	first, err := pass.Run(ctx)
	must(err)
	recs, err := st.Review(ctx, review)
	must(err)
	fates := map[string]outcome.Fate{}
	for _, r := range recs {
		name := strings.TrimPrefix(r.File, dir)
		if prev, ok := fates[name]; ok && prev != r.Fate {
			name += "+" // the second finding on a k file
		}
		fates[name] = r.Fate
	}
	want := map[string]outcome.Fate{"copy.c": outcome.Addressed, "log.c": outcome.Open, "a.py": outcome.Disliked,
		"b.py": outcome.Dismissed, "c.py": outcome.Open, "k1.c": outcome.Disliked, "k2.c": outcome.Disliked, "k3.c": outcome.Disliked}
	for name, w := range want {
		if fates[name] != w {
			t.Errorf("%s: fate %q, want %q (first pass %+v)", name, fates[name], w, first)
		}
	}
	now = now.Add(24 * time.Hour)
	second, err := pass.Run(ctx)
	must(err)
	// The pass's counts span every watched review (others' may judge
	// now); that this one's records stay as they were is checked below.
	if second.Read == 0 || second.Failed != 0 {
		t.Errorf("second pass %+v: want the review read again", second)
	}
	again, err := st.Review(ctx, review)
	must(err)
	if fmt.Sprint(again) != fmt.Sprint(recs) {
		t.Errorf("the second pass changed the records:\n%+v\n%+v", recs, again)
	}

	// The acceptance report, by prompt version and category.
	byPrompt := outcome.Acceptance(recs, outcome.ByPromptVersion, 2)
	dismissed := len(recs) - 3 // all but copy.c (addressed), log.c and c.py (open)
	if len(byPrompt) != 1 || byPrompt[0].Key == "(none)" || byPrompt[0].Accepted != 1 || byPrompt[0].Dismissed != dismissed || byPrompt[0].Open != 2 {
		t.Errorf("by prompt version: %+v, want one version with 1 accepted, %d dismissed, 2 open", byPrompt, dismissed)
	}
	for _, r := range outcome.Acceptance(recs, outcome.ByCategory, 2) {
		if r.Key == "maintainability" && (r.Findings != 1 || r.Open != 1) || r.Key == "security" && (r.Accepted != 1 || r.Dismissed != dismissed) {
			t.Errorf("by category: %+v", r)
		}
	}
	// The metrics the rollout gate and AcceptanceAlarm read, as the reads
	// of this review alone told them, summed as CloudWatch sums a period:
	// each judged finding once, copy.c's flip included (archived, then
	// addressed: one judged finding, accepted), by prompt version and
	// model and by environment alone.
	sums := map[string]float64{}
	for _, line := range bytes.Split(bytes.TrimSpace(emitted.Bytes()), []byte("\n")) {
		var rec map[string]any
		if err := json.Unmarshal(line, &rec); err != nil {
			t.Fatalf("metric line %s: %v", line, err)
		}
		for _, name := range []string{outcome.JudgedMetric, outcome.AcceptanceMetric} {
			v, ok := rec[name].(float64)
			switch {
			case !ok:
			case rec["PromptVersion"] == nil:
				sums[name] += v
			case rec["PromptVersion"] == byPrompt[0].Key:
				sums[name+" by version"] += v
			}
		}
	}
	wantSums := map[string]float64{outcome.JudgedMetric: float64(1 + dismissed), outcome.AcceptanceMetric: 1,
		outcome.JudgedMetric + " by version": float64(1 + dismissed), outcome.AcceptanceMetric + " by version": 1}
	if fmt.Sprint(sums) != fmt.Sprint(wantSums) {
		t.Errorf("emitted sums %v (prompt version %s): want %v: %d judged, 1 accepted, each by version too", sums, byPrompt[0].Key, wantSums, 1+dismissed)
	}

	// The next review under the same path: the shell finding (security,
	// dismissed twice by alice alone) and the committed secret are reported
	// however often they were dismissed, and nothing is withheld.
	cl2 := reviewVersionChange(t, map[string]string{dir + "d.py": shell, dir + "k4.c": key, dir + "copy2.c": copyV1})
	review2 := cl2 + 1
	runVersion(t, review2, cl2, 1)
	var shellComment, secretComment, strcpyComment bool
	summary := ""
	for _, c := range ourComments(t, review2) {
		switch {
		case c.Context == nil:
			summary = c.Body
		case strings.HasSuffix(c.Context.File, "d.py"):
			shellComment = true
		case strings.Contains(c.Body, "Committed secret"):
			secretComment = true
		case strings.Contains(c.Body, "Unbounded strcpy"):
			strcpyComment = true
		}
	}
	if !shellComment || !secretComment || !strcpyComment {
		t.Errorf("the next review: shell comment %v, committed secret %v and strcpy %v (want each reported)", shellComment, secretComment, strcpyComment)
	}
	if strings.Contains(summary, "withheld as repeatedly dismissed") {
		t.Errorf("the next review's summary withheld something:\n%s", summary)
	}
}

// restoreTallies puts the finding-kind tallies of scope back as they are
// now once the test ends: every tally item the test wrote is deleted and
// every one there before is put back as it was. The item layout (pk
// OUTCOME#kind#<scope>, sk <category>#<kind>) is shared/outcome's
// (kind.go, tallyKey); integration tests run one at a time, so no other
// test moves these tallies meanwhile.
func restoreTallies(ctx context.Context, t *testing.T, scope string) {
	t.Helper()
	table := env.out["JobsTableName"]
	items := func() []map[string]ddbtypes.AttributeValue {
		var out []map[string]ddbtypes.AttributeValue
		p := dynamodb.NewQueryPaginator(env.ddb, &dynamodb.QueryInput{TableName: &table, KeyConditionExpression: aws.String("pk = :pk"),
			ExpressionAttributeValues: map[string]ddbtypes.AttributeValue{":pk": &ddbtypes.AttributeValueMemberS{Value: "OUTCOME#kind#" + scope}}})
		for p.HasMorePages() {
			page, err := p.NextPage(ctx)
			if err != nil {
				t.Fatalf("read the tallies of %s: %v", scope, err)
			}
			out = append(out, page.Items...)
		}
		return out
	}
	before := items()
	t.Cleanup(func() {
		for _, it := range items() {
			if _, err := env.ddb.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: &table, Key: map[string]ddbtypes.AttributeValue{"pk": it["pk"], "sk": it["sk"]}}); err != nil {
				t.Errorf("restore the tallies of %s: %v", scope, err)
			}
		}
		for _, it := range before {
			if _, err := env.ddb.PutItem(ctx, &dynamodb.PutItemInput{TableName: &table, Item: it}); err != nil {
				t.Errorf("restore the tallies of %s: %v", scope, err)
			}
		}
	})
}
