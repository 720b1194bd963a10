package page

import (
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"io"
	"strconv"
	"strings"

	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/outbox"
	"github.com/criticizer/criticizer/shared/outcome"
)

// The page is written by html.go, every value escaped. The stylesheet is a
// constant, allowed by its hash in the Content-Security-Policy, so the page
// needs no 'unsafe-inline' and carries no script at all.

//go:embed page.css
var pageCSS string

// CSP is the page's Content-Security-Policy: nothing may load, the one
// inline stylesheet by its hash, no framing, no form posts, no base.
var CSP = "default-src 'none'; style-src '" + styleHash(pageCSS) + "'; img-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

func styleHash(css string) string {
	sum := sha256.Sum256([]byte(css))
	return "sha256-" + base64.StdEncoding.EncodeToString(sum[:])
}

// Page is what the job page shows: the job record, its review result as
// stored after redaction (nil until the llm stage finished), and its
// delivery rows.
type Page struct {
	Job        *job.Job
	Result     *domain.ReviewResult
	Deliveries []outbox.Row
	// Comments are the job's Swarm comment rows: a comment Swarm refused for
	// good fails its row, not the job, and shows here with its class.
	Comments []outbox.Row
	// Outcomes are what reviewers did with the findings of the job's review
	// (every version) or its e-mail-only findings; OutcomesRead says they
	// were read (the section shows).
	Outcomes     []outcome.Record
	OutcomesRead bool
	// Dismissals is the noise filter's policy (outcome.PolicyFromEnv):
	// depot paths are grouped by its scope.
	Dismissals outcome.Policy
}

// deliveryView is one delivery: Ref is the provider's id a reader can check
// (a Swarm comment id); a refused delivery's Status carries its class.
type deliveryView struct{ Channel, To, Status, At, Ref string }

// Render writes p as HTML.
func Render(w io.Writer, p Page) error {
	var h writer
	h.page(p)
	_, err := io.WriteString(w, h.String())
	return err
}

// deliveries are p's e-mails, Swarm comments and test-run callbacks.
func deliveries(p Page) []deliveryView {
	var out []deliveryView
	for _, r := range p.Deliveries {
		out = append(out, deliveryView{Channel: "e-mail", To: maskAddress(r.Recipient), Status: rowStatus(r), At: r.NotifiedAt})
	}
	for _, r := range p.Comments {
		// The kind and the comment id, never the item: a fingerprint is no
		// reader's business.
		out = append(out, deliveryView{Channel: "Swarm comment", To: "review " + strconv.FormatInt(r.Thread, 10) + ": " + r.ItemKind(),
			Status: rowStatus(r), At: r.NotifiedAt, Ref: commentRef(r)})
	}
	if sw := p.Job.Swarm; sw != nil {
		for _, c := range []job.Callback{job.CallbackUpdate, job.CallbackPass, job.CallbackFail} {
			if at := sw.Called(c); at != "" {
				out = append(out, deliveryView{Channel: "Swarm test run", To: "review " + strconv.FormatInt(sw.Review, 10), Status: string(c), At: at})
			}
		}
	}
	return out
}

// rowStatus is a row's state, with the failure class of a refusal
// ("failed (AUTH_DENIED)"): only the class, never the provider's text.
func rowStatus(r outbox.Row) string {
	if r.Status == outbox.Failed && r.LastErrorClass != "" {
		return string(r.Status) + " (" + r.LastErrorClass + ")"
	}
	return string(r.Status)
}

// commentRef is the Swarm comment id a sent comment row holds; an
// operator's confirmation text is not shown.
func commentRef(r outbox.Row) string {
	if _, err := strconv.ParseInt(r.NotificationID, 10, 64); err != nil {
		return ""
	}
	return "comment " + r.NotificationID
}

// maskAddress shows a recipient as the e-mail's reader would recognise it
// without handing the link's holder the address: "a…@example.com".
func maskAddress(a string) string {
	local, domainPart, ok := strings.Cut(strings.TrimSpace(a), "@")
	if !ok || local == "" {
		return "…"
	}
	r := []rune(local)
	return string(r[0]) + "…@" + domainPart
}
