package digest_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/criticizer/criticizer/shared/digest"
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/outcome"
	"github.com/criticizer/criticizer/shared/rerun"
	"github.com/criticizer/criticizer/shared/store/dynamotest"
	"github.com/criticizer/criticizer/shared/weekly"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func TestWeek(t *testing.T) {
	for _, tc := range []struct {
		at   string
		want string
		mon  string
	}{
		{"2026-11-27T07:00:00Z", "2026-W48", "2026-11-23"},
		{"2026-11-23T00:00:00Z", "2026-W48", "2026-11-23"},
		{"2026-11-22T23:59:59Z", "2026-W47", "2026-11-16"},
		{"2027-01-01T12:00:00Z", "2026-W53", "2026-12-28"}, // 2026 has 53 ISO weeks
		{"2025-12-29T00:00:00Z", "2026-W01", "2025-12-29"},
	} {
		at, _ := time.Parse(time.RFC3339, tc.at)
		w := weekly.WeekOf(at)
		if w.String() != tc.want || w.Start().Format("2006-01-02") != tc.mon {
			t.Errorf("WeekOf(%s) = %s starting %s, want %s starting %s", tc.at, w, w.Start().Format("2006-01-02"), tc.want, tc.mon)
		}
		if back, err := weekly.ParseWeek(tc.want); err != nil || back != w {
			t.Errorf("ParseWeek(%s) = %v, %v", tc.want, back, err)
		}
		if !w.End().Equal(w.Start().AddDate(0, 0, 7)) || weekly.WeekOf(w.End()) == w {
			t.Errorf("%s ends at %s", w, w.End())
		}
	}
	if w, _ := weekly.ParseWeek("2026-W48"); w.Previous().String() != "2026-W47" {
		t.Errorf("previous of 2026-W48 = %s", w.Previous())
	}
	for _, bad := range []string{"2026-W54", "2025-W53", "2026-48", "2026-W0", "x"} {
		if _, err := weekly.ParseWeek(bad); err == nil {
			t.Errorf("ParseWeek(%q) accepted", bad)
		}
	}
}

func TestOwners(t *testing.T) {
	owners, err := digest.Owners(map[string][]string{
		"//depot/engine/...": {"Lead@Example.com", "other@example.com"},
		"//depot/tools/...":  {"lead@example.com"},
	}, []string{"lead@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	if len(owners) != 1 || owners[0].Address != "lead@example.com" || strings.Join(owners[0].Paths, ",") != "//depot/engine/...,//depot/tools/..." {
		t.Fatalf("owners = %+v: want only the opted-in owner, with both paths", owners)
	}
	if _, err := digest.Owners(map[string][]string{"//depot/engine": {"a@example.com"}}, nil); err == nil {
		t.Fatal("a path that is no pattern was accepted")
	}
}

// fates is the outcome store over the in-process table, seeded.
func fates(t *testing.T) *outcome.Store {
	t.Helper()
	ctx := context.Background()
	st := outcome.NewStore(dynamotest.New(), dynamotest.Table)
	for _, r := range []outcome.Record{
		{Review: 885, Fingerprint: "a1", File: "//depot/engine/render/gl.cpp", Scope: "//depot/engine/...", Severity: "high", Category: "bug", Kind: "k1"},
		{Review: 885, Fingerprint: "a2", File: "//depot/engine/render/gl.cpp", Scope: "//depot/engine/...", Severity: "low", Category: "style", Kind: "k2"},
		{Review: 885, Fingerprint: "a3", File: "//depot/engine/io/file.cpp", Scope: "//depot/engine/...", Severity: "high", Category: "bug", Kind: "k3"},
	} {
		if _, err := st.Posted(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	// a1 addressed; a2 dismissed 3 times over (its kind withheld); a3 open.
	if _, err := st.ChangeFate(ctx, outcome.Record{Review: 885, Fingerprint: "a1", Fate: outcome.Open, File: "//depot/engine/render/gl.cpp", Scope: "//depot/engine/...", Category: "bug", Kind: "k1"}, outcome.Addressed, nil); err != nil {
		t.Fatal(err)
	}
	for i, fp := range []string{"a2", "b2", "c2"} {
		rv := int64(885 + i)
		if i > 0 {
			if _, err := st.Posted(ctx, outcome.Record{Review: rv, Fingerprint: fp, File: "//depot/engine/x.cpp", Scope: "//depot/engine/...", Severity: "low", Category: "style", Kind: "k2"}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := st.ChangeFate(ctx, outcome.Record{Review: rv, Fingerprint: fp, Fate: outcome.Open, File: "//depot/engine/x.cpp", Scope: "//depot/engine/...", Category: "style", Kind: "k2"}, outcome.Dismissed, []string{[]string{"alice", "bob"}[i%2]}); err != nil {
			t.Fatal(err)
		}
	}
	return st
}

// week is a week of entries: a Swarm review on the engine, an e-mail-only
// change on the engine, and a change on tools only.
func week() []weekly.Entry {
	return []weekly.Entry{
		{JobID: "j1", Changelist: 101, Review: 885, Dirs: []string{"//depot/engine/io", "//depot/engine/render", "//depot/shared"},
			Findings: []weekly.Finding{{Fingerprint: "a1", File: "//depot/engine/render/gl.cpp", Severity: "high"}, {Fingerprint: "a2", File: "//depot/engine/render/gl.cpp", Severity: "low"},
				{Fingerprint: "a3", File: "//depot/engine/io/file.cpp", Severity: "high"}, {Fingerprint: "zz", File: "//depot/engine/io/file.cpp", Severity: "critical"}, {Fingerprint: "s1", File: "//depot/shared/util.h", Severity: "high"}},
			Withheld: 1, InputTokens: 12000, OutputTokens: 800, CostUSD: 0.042},
		{JobID: "j2", Changelist: 102, Dirs: []string{"//depot/engine/net"},
			Findings:    []weekly.Finding{{Fingerprint: "e1", File: "//depot/engine/net/sock.cpp", Severity: "medium"}},
			InputTokens: 3000, OutputTokens: 200, CostUSD: 0.01},
		{JobID: "j3", Changelist: 103, Dirs: []string{"//depot/tools/build"},
			Findings:    []weekly.Finding{{Fingerprint: "t1", File: "//depot/tools/build/mk.py", Severity: "high"}},
			InputTokens: 999, OutputTokens: 99},
	}
}

func TestBuild(t *testing.T) {
	w, _ := weekly.ParseWeek("2026-W47")
	owner := digest.Owner{Address: "lead@example.com", Paths: []string{"//depot/engine/..."}}
	d, err := digest.Build(context.Background(), fates(t), outcome.DefaultPolicy(), owner, w, week())
	if err != nil {
		t.Fatal(err)
	}
	if d.Reviews != 2 || d.InputTokens != 15000 || d.OutputTokens != 1000 || d.Withheld != 1 {
		t.Fatalf("digest = %+v: want the two engine jobs' reviews, tokens and withheld count, not the tools job's", d)
	}
	var got []string
	for _, r := range d.Severity {
		got = append(got, r.Key)
	}
	if strings.Join(got, ",") != "critical,high,medium,low" {
		t.Fatalf("severities %v: want the severity order", got)
	}
	// high: a1 addressed, a3 open; critical: never posted; medium: e-mail
	// only; low: a2 dismissed.
	want := outcome.Row{Findings: 5, Accepted: 1, Dismissed: 1, Open: 1, Unknown: 2, Share: 0.5}
	if tt := d.Total; tt.Findings != want.Findings || tt.Accepted != want.Accepted || tt.Dismissed != want.Dismissed || tt.Open != want.Open || tt.Unknown != want.Unknown || tt.Share != want.Share {
		t.Fatalf("total = %+v, want %+v (e-mail-only and unposted findings unknown, never accepted)", tt, want)
	}
	if len(d.Suppressions) != 1 || d.Suppressions[0].Kind != "k2" || d.Suppressions[0].Scope != "//depot/engine/..." {
		t.Fatalf("suppressions = %+v, want k2 under //depot/engine/...", d.Suppressions)
	}
	tools, err := digest.Build(context.Background(), fates(t), outcome.DefaultPolicy(), digest.Owner{Address: "t@example.com", Paths: []string{"//depot/tools/..."}}, w, week())
	if err != nil || tools.Reviews != 1 || tools.Total.Findings != 1 || len(tools.Suppressions) != 0 {
		t.Fatalf("tools digest = %+v, %v", tools, err)
	}
}

func TestRenderGolden(t *testing.T) {
	w, _ := weekly.ParseWeek("2026-W47")
	d, err := digest.Build(context.Background(), fates(t), outcome.DefaultPolicy(), digest.Owner{Address: "lead@example.com", Paths: []string{"//depot/engine/..."}}, w, week())
	if err != nil {
		t.Fatal(err)
	}
	// Text from people and models is data: markup escaped, URLs inert.
	d.Suppressions = append(d.Suppressions, outcome.Suppression{Scope: "//depot/engine/...", Category: "<b>bug</b>", Kind: "see https://evil.example/x<script>"})
	text, html, err := digest.Render(d)
	if err != nil {
		t.Fatal(err)
	}
	for name, got := range map[string]string{"digest.txt.golden": text, "digest.html.golden": html} {
		p := filepath.Join("testdata", name)
		if *update {
			if err := os.WriteFile(p, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if got != string(want) {
			t.Errorf("%s differs (go test ./shared/digest -run TestRenderGolden -update):\n%s", name, got)
		}
	}
	if strings.Contains(html, "<script>") || strings.Contains(html, "<b>bug") || strings.Contains(html, "https://") || strings.Contains(text, "https://") {
		t.Fatalf("model or user text reached the digest live:\n%s\n%s", text, html)
	}
}

func TestWeekOfEvent(t *testing.T) {
	now, _ := time.Parse(time.RFC3339, "2026-12-01T10:00:00Z")
	for _, tc := range []struct{ event, want string }{
		{`{"week":"2026-W40"}`, "2026-W40"},
		{`{"version":"0","detail-type":"Scheduled Event","source":"aws.events","time":"2026-11-30T06:00:00Z","detail":{}}`, "2026-W48"},
		{``, "2026-W48"},
		{`{}`, "2026-W48"},
	} {
		w, err := weekly.WeekOfEvent([]byte(tc.event), now)
		if err != nil || w.String() != tc.want {
			t.Errorf("WeekOfEvent(%s) = %s, %v; want %s", tc.event, w, err, tc.want)
		}
	}
	if _, err := weekly.WeekOfEvent([]byte(`{"week":"soon"}`), now); err == nil {
		t.Error("a malformed week was accepted")
	}
}

// A job's entry names its changed directories as depot paths, its
// findings by fingerprint, and the tokens, cost and withheld count of its
// review meta.
func TestEntryOf(t *testing.T) {
	j := &job.Job{ID: "j1", Changelist: 7, Swarm: &job.SwarmRun{Review: 8}}
	cs := &domain.Changeset{Files: []domain.FileChange{{DepotPath: "//depot/engine/a/x.cpp"}, {DepotPath: "//depot/engine/a/y.cpp"}, {DepotPath: "//depot/tools/z.py"}}}
	review := domain.ReviewResult{Meta: domain.ReviewMeta{InputTokens: 100, OutputTokens: 10, EstimatedCostUSD: 0.5, WithheldAsDismissed: 2}.Map()}
	cur := []rerun.Current{{Fingerprint: "fp", Finding: domain.Finding{File: "//depot/engine/a/x.cpp", Severity: "HIGH"}}}
	e := weekly.EntryOf(j, review, cur, cs)
	if strings.Join(e.Dirs, ",") != "//depot/engine/a,//depot/tools" || e.Review != 8 || e.Changelist != 7 {
		t.Fatalf("entry %+v: want the depot directories, once each", e)
	}
	if len(e.Findings) != 1 || e.Findings[0] != (weekly.Finding{Fingerprint: "fp", File: "//depot/engine/a/x.cpp", Severity: "high"}) {
		t.Fatalf("findings %+v", e.Findings)
	}
	if e.InputTokens != 100 || e.OutputTokens != 10 || e.CostUSD != 0.5 || e.Withheld != 2 {
		t.Fatalf("entry %+v: want the meta's tokens, cost and withheld count", e)
	}
}

// A review of thousands of files still fits its entry in one item: its
// directories coarsened to their scopes, its least severe findings left out
// and counted, and the digest says so.
func TestHugeEntryFitsOneItem(t *testing.T) {
	ctx := context.Background()
	db := dynamotest.New()
	entries := &weekly.Entries{API: db, Table: dynamotest.Table}
	w, _ := weekly.ParseWeek("2026-W47")
	e := weekly.Entry{JobID: "big"}
	for i := range 6000 {
		dir := fmt.Sprintf("//depot/engine/module%04d/src/generated/deeply/nested", i)
		sev := "low"
		if i == 4321 {
			sev = "critical"
		}
		e.Dirs = append(e.Dirs, dir)
		e.Findings = append(e.Findings, weekly.Finding{Fingerprint: strings.Repeat("f", 64) + fmt.Sprint(i), File: dir + "/file.cpp", Severity: sev})
	}
	if err := entries.Record(ctx, w, e); err != nil {
		t.Fatal(err)
	}
	out, err := db.Query(ctx, &dynamodb.QueryInput{TableName: aws.String(dynamotest.Table), KeyConditionExpression: aws.String("pk = :pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: "DIGEST#week#2026-W47"}}})
	if err != nil || len(out.Items) != 1 {
		t.Fatal(out, err)
	}
	if n := len(out.Items[0]["data"].(*types.AttributeValueMemberS).Value); n > 400_000-1_000 {
		t.Fatalf("the entry is %d bytes: it does not fit one DynamoDB item", n)
	}
	got, err := entries.Week(ctx, w)
	if err != nil || len(got) != 1 {
		t.Fatal(got, err)
	}
	g := got[0]
	if g.Unlisted == 0 || g.Unlisted+len(g.Findings) != 6000 || g.Findings[0].Severity != "critical" || strings.Join(g.Dirs, ",") != "//depot/engine" {
		t.Fatalf("entry: %d listed, %d unlisted, first %+v, dirs %v; want the critical one kept, the rest counted, dirs by scope", len(g.Findings), g.Unlisted, g.Findings[0], g.Dirs)
	}
	d, err := digest.Build(ctx, fates(t), outcome.DefaultPolicy(), digest.Owner{Address: "a@example.com", Paths: []string{"//depot/engine/..."}}, w, got)
	if err != nil || d.Unlisted != g.Unlisted {
		t.Fatal(d.Unlisted, err)
	}
	if text, _, _ := digest.Render(d); !strings.Contains(text, "findings of very large reviews, not itemised here") {
		t.Fatalf("the digest does not say what it left out:\n%s", text)
	}
}
