//go:build integration

package integration

import (
	"fmt"
	"html"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/mail"
	"regexp"
	"strings"
	"testing"

	"github.com/criticizer/criticizer/shared/jobpage"
)

// pagePath is the /view/<id>/<token> part of a job page link (the link's
// host is the API as its minter knew it; the emulator serves the same
// route under env.apiURL).
func pagePath(t *testing.T, what, link, id string) string {
	t.Helper()
	i := strings.Index(link, jobpage.PathPrefix+id+"/")
	if i < 0 || !strings.HasPrefix(link, "http") {
		t.Fatalf("%s link %q: want an absolute job page URL for job %s", what, link, id)
	}
	return link[i:]
}

// textPart is the decoded text/plain part of a message.
func textPart(t *testing.T, raw []byte) string {
	t.Helper()
	return mailPart(t, raw, "text/plain")
}

// mailPart is the decoded part of a message of the content type ctype.
func mailPart(t *testing.T, raw []byte, ctype string) string {
	t.Helper()
	msg, err := mail.ReadMessage(strings.NewReader(string(raw)))
	if err != nil {
		t.Fatal(err)
	}
	_, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil {
		t.Fatal(err)
	}
	mr := multipart.NewReader(msg.Body, params["boundary"])
	for {
		p, err := mr.NextPart() // decodes quoted-printable
		if err != nil {
			t.Fatalf("no %s part: %v", ctype, err)
		}
		if strings.HasPrefix(p.Header.Get("Content-Type"), ctype) {
			b, _ := io.ReadAll(p)
			return string(b)
		}
	}
}

func getPage(t *testing.T, path string) (*http.Response, string) {
	t.Helper()
	resp, err := http.Get(env.apiURL + path) // no signature: the link is the credential
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// TestJobPageOpensFromSwarmAndEmail: a Swarm review's {update} link and the
// e-mail's "View this review" link are the same job page, which opens
// through API Gateway without a signature and shows the findings the e-mail
// shows; a tampered link or another job's id answers 404.
func TestJobPageOpensFromSwarmAndEmail(t *testing.T) {
	// A submitted change with findings (12345: a strcpy into a fixed buffer), reviewed for a Swarm review by bob.
	cl := newChange(t, 12345)
	_, run := swarmReview(cl)
	id := swarmJob(t, cl, run, "submitted")
	j := waitJob(t, id, untilSettled(), "succeeded", succeeded)
	calls := awaitCalls(t, run, "pass", untilDeadLettered())
	fromSwarm := pagePath(t, "{update}", calls[0].URL, id)
	if calls[0].Kind != "update" || pagePath(t, "{pass}", calls[1].URL, id) != fromSwarm {
		t.Fatalf("callbacks %+v: want update and pass linking the same page", calls)
	}
	mails := waitMails(t, cl, 1, 1, untilDeadLettered())
	text := textPart(t, mails[0].Raw)
	m := regexp.MustCompile(`(?m)^View this review: (\S+)\r?$`).FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("the e-mail has no job page link:\n%.1200s", text)
	}
	if fromMail := pagePath(t, "e-mail", m[1], id); fromMail != fromSwarm {
		t.Fatalf("e-mail links %s, Swarm %s: want one page", fromMail, fromSwarm)
	}
	// A reader clicks the e-mail's link as it is: locally it must be the
	// emulator's address, not the API's AWS one.
	if !strings.HasPrefix(m[1], env.apiURL+"/") {
		t.Fatalf("the e-mail links %s: want the page under %s", m[1], env.apiURL)
	}

	page, body := getPage(t, fromSwarm)
	if page.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", fromSwarm, page.StatusCode, body)
	}
	if ct := page.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
		t.Errorf("Content-Type %q", ct)
	}
	for h, want := range map[string]string{"Content-Security-Policy": "default-src 'none'", "X-Content-Type-Options": "nosniff",
		"Referrer-Policy": "no-referrer", "Cache-Control": "no-store"} {
		if !strings.HasPrefix(page.Header.Get(h), want) {
			t.Errorf("%s = %q, want %q", h, page.Header.Get(h), want)
		}
	}
	if !strings.Contains(body, "succeeded") || !strings.Contains(body, "review version 1") {
		t.Errorf("the page does not show the finished job:\n%.1500s", body)
	}
	// Every finding the e-mail lists ("1. [HIGH] file:line  Title") is on the page.
	titles := regexp.MustCompile(`(?m)^\d+\. \[[A-Z]+\] (\S+)  (.+?)\r?$`).FindAllStringSubmatch(text, -1)
	if len(titles) != j.FindingCount || len(titles) == 0 {
		t.Fatalf("%d findings in the e-mail, %d on the job: the fixture must produce findings", len(titles), j.FindingCount)
	}
	for _, f := range titles {
		if !strings.Contains(body, html.EscapeString(f[1])) || !strings.Contains(body, html.EscapeString(strings.TrimSpace(f[2]))) {
			t.Errorf("the page lacks the e-mail's finding %s %q", f[1], f[2])
		}
	}
	assertNoSecrets(t, "job page", body)
	// The comments the job posted on the review are deliveries too (the local
	// stack posts them): the summary's row, sent, with its comment id.
	if !regexp.MustCompile(fmt.Sprintf(`<td>Swarm comment</td><td>review %d: summary</td><td>sent</td><td>[^<]+</td><td>comment \d+</td>`, cl+1)).MatchString(body) {
		t.Errorf("the page does not list the summary comment among the deliveries:\n%.3000s", body)
	}
	// What reviewers did with the review's findings: posted, nobody reacted
	// yet, shown by every grouping of the acceptance report.
	if !regexp.MustCompile(`[1-9]\d* findings? recorded for this review, none accepted or dismissed yet`).MatchString(body) ||
		!strings.Contains(body, "<h3>By prompt version</h3>") || !strings.Contains(body, "<h3>By path</h3>") {
		t.Errorf("the page does not show the review's findings as open in its acceptance section:\n%.4000s", body)
	}
	if strings.Contains(body, "bob@example.com") {
		t.Error("the page shows a recipient's address")
	}

	// Wrong links: 404, the same answer whether or not the job exists.
	token := fromSwarm[strings.LastIndex(fromSwarm, "/")+1:]
	tampered := []byte(token)
	tampered[0] ^= 'A' ^ 'B' // still base64url, another token
	if tampered[0] == token[0] {
		t.Fatal("tampering changed nothing")
	}
	for name, path := range map[string]string{
		"tampered token":      jobpage.PathPrefix + id + "/" + string(tampered),
		"token of another id": jobpage.PathPrefix + "00000000-0000-4000-8000-000000000000/" + token,
	} {
		resp, body := getPage(t, path)
		if resp.StatusCode != http.StatusNotFound || strings.Contains(body, id) {
			t.Errorf("%s: %d %q, want a 404 that names nothing", name, resp.StatusCode, body)
		}
	}
	// Machines keep the signed status endpoint.
	if st := call(t, http.MethodGet, "/jobs/"+id, nil, nil); st.Status != http.StatusOK {
		t.Errorf("signed GET /jobs/%s: %d", id, st.Status)
	}
}
