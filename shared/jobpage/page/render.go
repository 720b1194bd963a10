package page

import (
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/outbox"
	"github.com/criticizer/criticizer/shared/outcome"
	"github.com/criticizer/criticizer/shared/render"
)

// The page is written by html.go, every value escaped. The stylesheet is a
// constant, allowed by its hash in the Content-Security-Policy, so the page
// needs no 'unsafe-inline' and carries no script at all.

//go:embed page.css
var files embed.FS

var (
	pageCSS = mustRead("page.css")
	// CSP is the page's Content-Security-Policy: nothing may load, the one
	// inline stylesheet by its hash, no framing, no form posts, no base.
	CSP = "default-src 'none'; style-src '" + styleHash(pageCSS) + "'; img-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)

func mustRead(name string) string {
	b, err := files.ReadFile(name)
	if err != nil {
		panic(err) // embedded at build time: cannot fail
	}
	return string(b)
}

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

type view struct {
	CSS        string // the constant stylesheet, written raw
	JobID      string
	Changelist int64
	Version    int
	State      string
	Stage      string
	Created    string
	Updated    string
	Expires    string
	Stages     []stageView
	Reviewed   bool
	Summary    string
	Total      int
	Counts     []render.Count
	Files      []render.File
	Coverage   coverageView
	Deliveries []deliveryView
	// Acceptance: one table per outcome.Dimensions grouping; nil hides the
	// section, empty says nothing is recorded yet.
	Acceptance   []acceptanceView
	OutcomesRead bool
	Reacted      int // findings accepted or dismissed
	Recorded     int
}

// acceptanceView is one grouping of the acceptance section.
type acceptanceView struct {
	Dimension string
	Rows      []acceptanceRow
}

type acceptanceRow struct {
	Key                                       string
	Findings, Accepted, Dismissed, Open, None int
	Share                                     string
}

type stageView struct{ Name, Status, ErrorClass, Attempts string }

type coverageView struct {
	FilesReviewed, ModelCalls, Dropped int
	Prompt                             string
	Skipped                            []skippedView
	Truncated                          []truncatedView
}

type skippedView struct{ File, Reason string }
type truncatedView struct {
	File               string
	Reviewed, Original int
}

// deliveryView is one delivery: Ref is the provider's id a reader can check
// (a Swarm comment id); a refused delivery's Status carries its class.
type deliveryView struct{ Channel, To, Status, At, Ref string }

// Render writes p as HTML.
func Render(w io.Writer, p Page) error {
	var h writer
	h.page(build(p))
	_, err := io.WriteString(w, h.String())
	return err
}

func build(p Page) view {
	j := p.Job
	v := view{CSS: pageCSS, JobID: j.ID, Changelist: j.Changelist, Version: j.ReviewVersion,
		State: string(j.State), Stage: string(j.Stage), Created: j.CreatedAt, Updated: j.UpdatedAt}
	if j.ExpiresAt > 0 {
		v.Expires = job.FormatTime(time.Unix(j.ExpiresAt, 0))
	}
	for _, s := range domain.Stages {
		r := j.StageRecord(s)
		v.Stages = append(v.Stages, stageView{Name: string(s), Status: string(r.Status), ErrorClass: string(r.LastErrorClass), Attempts: strconv.Itoa(r.Attempts)})
	}
	if p.Result != nil {
		v.Reviewed = true
		v.Summary = strings.TrimSpace(p.Result.Summary)
		v.Total = len(p.Result.Findings)
		v.Files, v.Counts = render.ByFile(p.Result.Findings, nil, 0), render.Counts(p.Result.Findings)
		m := domain.ReadReviewMeta(p.Result.Meta)
		v.Coverage = coverageView{FilesReviewed: m.FilesReviewed, ModelCalls: m.ModelCalls, Dropped: m.DroppedFindings, Prompt: p.Result.PromptVersion}
		for _, s := range m.SkippedFiles {
			v.Coverage.Skipped = append(v.Coverage.Skipped, skippedView{File: s.File, Reason: domain.SkipReason(s.Reason)})
		}
		for _, t := range m.TruncatedFiles {
			v.Coverage.Truncated = append(v.Coverage.Truncated, truncatedView{File: t.File, Reviewed: t.ReviewedBytes, Original: t.OriginalBytes})
		}
	}
	for _, r := range p.Deliveries {
		v.Deliveries = append(v.Deliveries, deliveryView{Channel: "e-mail", To: maskAddress(r.Recipient), Status: rowStatus(r), At: r.NotifiedAt})
	}
	for _, r := range p.Comments {
		// The kind and the comment id, never the item: a fingerprint is no
		// reader's business.
		v.Deliveries = append(v.Deliveries, deliveryView{Channel: "Swarm comment", To: "review " + strconv.FormatInt(r.Thread, 10) + ": " + r.ItemKind(),
			Status: rowStatus(r), At: r.NotifiedAt, Ref: commentRef(r)})
	}
	if sw := j.Swarm; sw != nil {
		for _, c := range []job.Callback{job.CallbackUpdate, job.CallbackPass, job.CallbackFail} {
			if at := sw.Called(c); at != "" {
				v.Deliveries = append(v.Deliveries, deliveryView{Channel: "Swarm test run", To: "review " + strconv.FormatInt(sw.Review, 10), Status: string(c), At: at})
			}
		}
	}
	v.OutcomesRead, v.Recorded = p.OutcomesRead, len(p.Outcomes)
	if len(p.Outcomes) > 0 {
		v.Acceptance, v.Reacted = acceptance(p.Outcomes, p.Dismissals)
	}
	return v
}

// acceptance groups a review's outcome records by every dimension of the
// report (outcome.Acceptance, as `criticizer outcomes report`), depot paths
// by the scope a kind is withheld under, and counts those reacted to.
func acceptance(recs []outcome.Record, pol outcome.Policy) ([]acceptanceView, int) {
	var out []acceptanceView
	reacted := 0
	for _, r := range recs {
		if r.Fate.Accepted() || r.Fate.Dismissive() {
			reacted++
		}
	}
	for _, d := range outcome.Dimensions {
		a := acceptanceView{Dimension: strings.ReplaceAll(string(d), "_", " ")}
		for _, r := range outcome.Acceptance(recs, d, pol.PathDepth()) {
			share := "–"
			if r.Share >= 0 {
				share = fmt.Sprintf("%.0f%% (%d of %d)", 100*r.Share, r.Accepted, r.Accepted+r.Dismissed)
			}
			a.Rows = append(a.Rows, acceptanceRow{Key: r.Key, Findings: r.Findings, Accepted: r.Accepted, Dismissed: r.Dismissed, Open: r.Open, None: r.Unknown, Share: share})
		}
		out = append(out, a)
	}
	return out, reacted
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
