//go:build integration

package integration

import (
	"encoding/json"
	"fmt"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/criticizer/criticizer/internal/rendercheck"
	llmstandin "github.com/criticizer/criticizer/internal/standin/llm"
	swarmstandin "github.com/criticizer/criticizer/internal/standin/swarm"
	"github.com/criticizer/criticizer/shared/result"
)

// TestHostileFindingsAreInertWhereTheyAreRead (issue 37's acceptance): a
// changelist steers the model (the LLM stand-in's content fault) into
// answering findings whose title, message, suggestion and rule id are each
// a hostile fragment (rendercheck.Hostile). Reviewed through the deployed
// stack with Swarm, every comment the Swarm stand-in stored renders
// through Parsedown 1.7.4 behind Swarm's Linkify pass and through goldmark
// with no link, image or element from model text and no mention Swarm
// reads; the review's participants and required reviewers are what they
// were; the e-mail's HTML part has no model-written href or src and its
// text part nothing a GFM autolinker links.
func TestHostileFindingsAreInertWhereTheyAreRead(t *testing.T) {
	var path string
	cl := newChangeWith(t, 12348, func(fx map[string]any) {
		path = fmt.Sprintf("//depot/projectA/src/net/inert_%v.c", fx["change"])
		var code strings.Builder
		for i := range rendercheck.Hostile {
			fmt.Fprintf(&code, "int v%d = %d;\n", i, i)
		}
		fx["files"] = append(fx["files"].([]any), map[string]any{"path": path, "action": "add", "type": "text", "rev": 0, "after": code.String()})
	})
	var findings []map[string]any
	for i, h := range rendercheck.Hostile {
		findings = append(findings, map[string]any{"id": fmt.Sprintf("F%d", i), "severity": []string{"high", "medium", "low"}[i%3],
			"category": "security", "title": h, "file": path, "line": i + 1, "message": h, "suggestion": h, "confidence": "high",
			"rule_id": fmt.Sprintf("inert.%d %s", i, h)})
	}
	answer, _ := json.Marshal(map[string]any{"schema_version": result.SchemaVersion, "prompt_version": result.StablePromptVersion,
		"summary": strings.Join(rendercheck.Hostile, "\n"), "findings": findings})
	content := string(answer)
	fault(t, llmstandin.Fault{Content: &content, Match: path})

	review, run := swarmReview(cl, "carol")
	before := env.local.Swarm.Participants(review)
	waitJob(t, swarmJob(t, cl, run, "shelved"), untilSettled(), "succeeded", succeeded)

	var bodies []string
	hostile, page := 0, ""
	for _, c := range ourComments(t, review) {
		bodies = append(bodies, c.Body)
		if c.Context != nil && c.Context.File == path {
			hostile++
		}
		if m := jobPageLink.FindStringSubmatch(c.Body); m != nil {
			page = m[1]
		}
	}
	if hostile < len(rendercheck.Hostile) {
		t.Fatalf("%d comments on %s, want one per hostile finding (%d): the model's answer did not get through", hostile, path, len(rendercheck.Hostile))
	}
	probs, err := rendercheck.SwarmComments(bodies, page)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range probs {
		if len(p) > 0 {
			t.Errorf("comment %d renders live:\n%s\n%s", i, bodies[i], strings.Join(p, "\n"))
		}
	}
	// Commenting makes the service a participant, as Swarm makes every
	// commenter one; its mentions must add nobody else.
	if after := env.local.Swarm.Participants(review); !reflect.DeepEqual(after, participantWith(before, "criticizer")) {
		t.Errorf("the comments changed the review's participants: %+v, were %+v", after, before)
	}

	mails := mailsFor(cl, 1) // sent before the comments: the job succeeded
	if len(mails) == 0 {
		t.Fatal("no e-mail for the change")
	}
	for _, m := range mails {
		text, html := textPart(t, m.Raw), mailPart(t, m.Raw, "text/html")
		if !strings.Contains(text, "inert.0") {
			t.Fatalf("the e-mail lacks the hostile findings:\n%.2000s", text)
		}
		allowed := serviceLinks(html, page)
		if p := rendercheck.MailText(text, allowed...); len(p) > 0 {
			t.Errorf("the text part links model text: %s", strings.Join(p, "; "))
		}
		if p := rendercheck.MailHTML(html, allowed...); len(p) > 0 {
			t.Errorf("the HTML part carries model text live: %s", strings.Join(p, "; "))
		}
	}
}

// jobPageLink is the summary comment's link to the job page, the service's own.
var jobPageLink = regexp.MustCompile(`\[The review's job page\]\((\S+)\)`)

var hrefs = regexp.MustCompile(`href="([^"]+)"`)

// serviceLinks are the links of an e-mail's HTML part the service made:
// to the Swarm stand-in's review pages and to the job page's origin.
func serviceLinks(html, page string) []string {
	origins := []string{env.local.Swarm.URL()}
	if u, err := url.Parse(page); err == nil && page != "" {
		origins = append(origins, u.Scheme+"://"+u.Host+"/")
	}
	out := []string{page}
	for _, m := range hrefs.FindAllStringSubmatch(html, -1) {
		h := strings.ReplaceAll(m[1], "&amp;", "&")
		for _, o := range origins {
			if strings.HasPrefix(h, o) {
				out = append(out, h)
			}
		}
	}
	return out
}

// participantWith is ps with id among them, sorted by id as the stand-in
// lists them.
func participantWith(ps []swarmstandin.Participant, id string) []swarmstandin.Participant {
	if !slices.ContainsFunc(ps, func(p swarmstandin.Participant) bool { return p.ID == id }) {
		ps = append(slices.Clone(ps), swarmstandin.Participant{ID: id})
	}
	slices.SortFunc(ps, func(a, b swarmstandin.Participant) int { return strings.Compare(a.ID, b.ID) })
	return ps
}
