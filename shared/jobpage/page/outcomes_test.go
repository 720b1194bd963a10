package page

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/criticizer/criticizer/shared/jobpage"
	"github.com/criticizer/criticizer/shared/outcome"
)

// fakeOutcomes serves records by review and by changelist (e-mail only),
// and records what was asked.
type fakeOutcomes struct {
	review, email map[int64][]outcome.Record
	asked         []string
	err           error
}

func (f *fakeOutcomes) Review(_ context.Context, review int64) ([]outcome.Record, error) {
	f.asked = append(f.asked, "review")
	return f.review[review], f.err
}

func (f *fakeOutcomes) EmailOnlyRecords(_ context.Context, cl int64) ([]outcome.Record, error) {
	f.asked = append(f.asked, "changelist")
	return f.email[cl], f.err
}

// The job page shows what reviewers did with the findings of the job's
// review, by every grouping of the report with counts and the share
// accepted; an e-mail-only finding is unknown, never accepted; model or
// path text in a key is escaped; behind the same link check as the page.
func TestPageShowsAcceptance(t *testing.T) {
	h, _, _, _ := newHandler(t, "key-1")
	outs := &fakeOutcomes{review: map[int64][]outcome.Record{77: {
		{Fate: outcome.Addressed, PromptVersion: "1.1.0", Model: "m1", Category: "security", Severity: "high", RuleID: "sqli", File: "//depot/projectA/src/a.go"},
		{Fate: outcome.Liked, PromptVersion: "1.1.0", Model: "m1", Category: "security", Severity: "high", RuleID: "sqli", File: "//depot/projectA/src/b.go"},
		{Fate: outcome.Dismissed, PromptVersion: "1.1.0", Model: "m1", Category: "style", Severity: "low", File: "//depot/projectA/c.go"},
		{Fate: outcome.Open, PromptVersion: "1.0.0", Model: "m1", Category: "bug", Severity: "medium", File: "//depot/libs/" + hostile + "/d.go"},
	}}}
	h.Outcomes = outs
	resp := get(h, jobpage.Path([]byte("key-1"), jobA))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, resp.Body)
	}
	body := resp.Body
	for _, want := range []string{
		"What reviewers did with the findings", "4 findings recorded for this review, 3 accepted or dismissed",
		"<h3>By prompt version</h3>", "<h3>By model</h3>", "<h3>By category</h3>", "<h3>By severity</h3>", "<h3>By rule id</h3>", "<h3>By path</h3>",
		"<tr><td><code>1.1.0</code></td><td>3</td><td>2</td><td>1</td><td>0</td><td>0</td><td>67% (2 of 3)</td></tr>",
		"<tr><td><code>1.0.0</code></td><td>1</td><td>0</td><td>0</td><td>1</td><td>0</td><td>–</td></tr>",
		"<tr><td><code>sqli</code></td><td>2</td><td>2</td><td>0</td><td>0</td><td>0</td><td>100% (2 of 2)</td></tr>",
		"<tr><td><code>//depot/projectA/...</code></td><td>3</td>",
		"&lt;script&gt;alert(1)&lt;/script&gt;",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(body, "<script>") {
		t.Error("a depot path became markup")
	}
	// A job with no Swarm review: its e-mail-only findings, unknown.
	j, _ := h.Jobs.Get(context.Background(), jobA)
	j.Swarm = nil
	outs.email = map[int64][]outcome.Record{4242: {{Fate: outcome.Unknown, PromptVersion: "1.1.0", Category: "bug"}}}
	body = get(h, jobpage.Path([]byte("key-1"), jobA)).Body
	if !strings.Contains(body, "1 finding recorded for this review, none accepted or dismissed yet") ||
		!strings.Contains(body, "<tr><td><code>1.1.0</code></td><td>1</td><td>0</td><td>0</td><td>0</td><td>1</td><td>–</td></tr>") {
		t.Errorf("e-mail-only findings not shown as unknown:\n%s", body)
	}
	// A wrong link reads no outcomes; an outcome read that fails is a 503, not a page without them.
	outs.asked = nil
	if resp := get(h, jobpage.Path([]byte("other-key"), jobA)); resp.StatusCode != http.StatusNotFound || len(outs.asked) != 0 {
		t.Errorf("wrong link: %d, outcomes read %v", resp.StatusCode, outs.asked)
	}
	outs.err = errors.New("throttled")
	if resp := get(h, jobpage.Path([]byte("key-1"), jobA)); resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("failed outcome read: status %d", resp.StatusCode)
	}
}
