// Package decide decides what a review says before it is delivered: the
// findings the dismissal policy withholds, the comparison with the previous
// version, the Swarm gate verdict, the weekly digest entry. The llm stage
// calls Decide and stores the decided review beside the result; notify only
// delivers it, so a retry or replay tells the same and never decides again.
package decide

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/criticizer/criticizer/shared/artifacts"
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/ledger"
	"github.com/criticizer/criticizer/shared/letter"
	"github.com/criticizer/criticizer/shared/outcome"
	"github.com/criticizer/criticizer/shared/render"
	"github.com/criticizer/criticizer/shared/rerun"
	"github.com/criticizer/criticizer/shared/swarm"
	"github.com/criticizer/criticizer/shared/weekly"
)

// Decided is a decided review, as the notify stage delivers it.
type Decided struct {
	// Result is the review less what is withheld as dismissed (counted,
	// with its kinds, in its meta).
	Result domain.ReviewResult `json:"result"`
	// Current are its distinct findings by the one fingerprint.
	Current []rerun.Current `json:"current"`
	// Groups is the one comparison with the previous version (nil for a
	// first one); the e-mail and the Swarm summary both show it.
	Groups *rerun.Groups `json:"groups,omitempty"`
	// Gate is the Swarm test run's verdict; notify fills in Where.
	Gate swarm.Outcome `json:"gate"`
	// Scopes are a Swarm review's findings' depot path scopes under the
	// policy (by fingerprint), which their outcome records are kept under
	// when they are posted (Outcomes.Posted).
	Scopes map[string]string `json:"scopes,omitempty"`
	// PageURL is the job page's link (jobpage.Links), minted with the
	// review so delivery reads no page key; "" with no job page.
	PageURL string `json:"page_url,omitempty"`
	// Email is the review e-mail's letter, the same for every recipient
	// (notify adds each one's envelope and reference line).
	Email letter.Letter `json:"email"`
	// Comments is a Swarm review's comments as decided (nil with no Swarm
	// review): which an earlier version already has, the inline cap and
	// the notes on resolved findings are settled at delivery, by the
	// review's rows (package notifystage).
	Comments *Comments `json:"comments,omitempty"`
}

// Comments are a version's comments on its Swarm review.
type Comments struct {
	// Findings are Current's comments, one each, in its order.
	Findings []FindingComment `json:"findings"`
	// Summary is the version's summary: its counts, the comparison with
	// the previous version, the job page link.
	Summary string `json:"summary"`
}

// FindingComment is one finding's comment.
type FindingComment struct {
	Body string `json:"body"`
	// Context anchors it on its file and line (nil: a finding on no file,
	// said on the review as a whole).
	Context *swarm.CommentContext `json:"context,omitempty"`
	// Unanchored is its body on the review as a whole, naming file and
	// line, should Swarm refuse the context.
	Unanchored string `json:"unanchored,omitempty"`
	// Task: findings of high severity and above are open tasks.
	Task bool `json:"task,omitempty"`
}

// Key is where a job's decided review is stored, beside its result.
func Key(jobID string) string { return artifacts.Key(jobID, "decided.json") }

// Decider decides reviews. Every dependency but Artifacts may be nil or
// zero: nothing compared (Ledger), nothing withheld or resolved
// (Outcomes), no gate ("").
type Decider struct {
	Artifacts *artifacts.Store // the redacted bucket: the previous version's result, the decided review
	// Ledger has the previous version's entry; Jobs reads that version's
	// job for the titles of what it resolved.
	Ledger ledger.Entries
	Jobs   job.Getter
	// Outcomes are the reviewers' recorded fates: withholding reads them,
	// and the findings a rerun resolved are recorded resolved.
	Outcomes *outcome.Store
	// Policy is the noise filter (outcome.PolicyFromEnv); its Gate
	// (SWARM_GATE_SEVERITY, "" off) is the run's gate too.
	Policy outcome.Policy
	// Weeks keeps each review's weekly digest entry (weekly.Entries, with
	// WEEKLY_DIGEST); nil: the digest is off.
	Weeks WeekEntries
	// Page mints the job page link the e-mail and Swarm summary carry
	// (jobpage.Links); nil: no page.
	Page PageLinks
	// SwarmLinks links a Swarm job's review in its e-mail (SWARM_URL/reviews/{id}).
	SwarmLinks swarm.Settings
}

// PageLinks mints a job's page URL.
type PageLinks interface {
	URL(ctx context.Context, jobID string) (string, error)
}

// WeekEntries keeps the weekly digest's entries (weekly.Entries).
type WeekEntries interface {
	Record(ctx context.Context, week weekly.Week, e weekly.Entry) error
}

// Decide decides j's review, records withheld and resolved fates
// (conditional writes: deciding again writes nothing twice) and its week
// entry, and stores it at Key(j.ID).
func (d *Decider) Decide(ctx context.Context, j *job.Job, review domain.ReviewResult, cs *domain.Changeset) error {
	found := len(review.Findings)
	swarmReview := d.Outcomes != nil && j.Swarm != nil && j.Swarm.Review > 0
	var err error
	if swarmReview {
		if review, err = d.withholdDismissed(ctx, j, review, cs); err != nil {
			return err
		}
	}
	dr := Decided{Result: review, Current: rerun.Distinct(review.Findings, cs)}
	if swarmReview {
		pol := d.Policy.WithRules(domain.ReadReviewMeta(review.Meta))
		dr.Scopes = map[string]string{}
		for _, c := range dr.Current {
			dr.Scopes[c.Fingerprint] = pol.Scope(c.Finding.File)
		}
	}
	if dr.Groups, err = d.compare(ctx, j, review, dr.Current, cs); err != nil {
		return err
	}
	if swarmReview && dr.Groups != nil {
		if err := d.resolve(ctx, j.Swarm.Review, dr.Groups); err != nil {
			return err
		}
	}
	dr.Gate = gate(found, review.Findings, domain.ReadReviewMeta(review.Meta).Gates, d.Policy.Gate)
	if err := d.recordWeek(ctx, j, &dr, cs); err != nil {
		return err
	}
	if d.Page != nil {
		// Unreadable key: retried like any dependency, so the review is never
		// delivered without the link the environment promises.
		if dr.PageURL, err = d.Page.URL(ctx, j.ID); err != nil {
			return fmt.Errorf("job page link: %w", err)
		}
	}
	if j.Swarm != nil && j.Swarm.Review > 0 {
		dr.Comments = comments(j, &dr, cs)
	}
	dr.Email = d.email(j, &dr, cs)
	return d.Artifacts.PutJSON(ctx, Key(j.ID), dr)
}

// email is j's e-mail letter: what it found, as decided, and the links to
// its Swarm review and job page.
func (d *Decider) email(j *job.Job, dr *Decided, cs *domain.Changeset) letter.Letter {
	reviewURL := ""
	if j.Swarm != nil {
		reviewURL = d.SwarmLinks.ReviewURL(j.Swarm.Review)
	}
	return letter.Write(j.Changelist, j.ReviewVersion, letter.Content{Author: cs.User, Description: cs.Description, JobID: j.ID, Review: dr.Result,
		Changeset: cs, ReviewURL: reviewURL, JobPageURL: dr.PageURL, Rerun: dr.Groups, Current: dr.Current})
}

// comments are j's comments on its Swarm review: each distinct finding's,
// anchored on its file and line with the lines around it, and the summary.
func comments(j *job.Job, dr *Decided, cs *domain.Changeset) *Comments {
	version := max(j.ReviewVersion, 1)
	files := map[string]domain.FileChange{}
	for _, f := range cs.Files {
		files[f.DepotPath] = f
	}
	out := &Comments{}
	counts := map[string]int{}
	for _, c := range dr.Current {
		f := c.Finding
		counts[strings.ToLower(f.Severity)]++
		fc := FindingComment{Body: render.Markdown(f), Unanchored: render.MarkdownUnanchored(f, version),
			Task: domain.SeverityRank(f.Severity) <= domain.SeverityRank("high")}
		if f.File != "" { // a finding on no file is said on the review as a whole
			fc.Context = &swarm.CommentContext{File: f.File, RightLine: max(f.Line, 0), Version: version, Content: render.CommentContext(files[f.File], f.Line)}
		}
		out.Findings = append(out.Findings, fc)
	}
	since := ""
	if g := dr.Groups; g != nil {
		// The comparison's counts, the same the e-mail shows.
		since = render.SinceLine(g.PreviousVersion, len(g.New), len(g.StillOpen), len(g.Resolved), len(g.NotRechecked))
	}
	out.Summary = render.SwarmSummary(version, len(dr.Current), counts, domain.ReadReviewMeta(dr.Result.Meta), dr.PageURL, since)
	return out
}

// recordWeek keeps the job's entry in the weekly digest of the week it
// was created in: what it reports, after any withheld, its tokens and
// estimated cost. Deciding again writes the same item.
func (d *Decider) recordWeek(ctx context.Context, j *job.Job, dr *Decided, cs *domain.Changeset) error {
	if d.Weeks == nil {
		return nil
	}
	created, err := job.ParseTime(j.CreatedAt)
	if err != nil {
		created = time.Now()
	}
	if err := d.Weeks.Record(ctx, weekly.WeekOf(created), weekly.EntryOf(j, dr.Result, dr.Current, cs)); err != nil {
		return fmt.Errorf("weekly digest entry: %w", err)
	}
	return nil
}

// withholdDismissed drops the findings of a kind people with a say under
// their depot path dismissed repeatedly and never accepted
// (outcome.WithheldBy; never one at or above the gate, security, or a
// committed secret, so the gate result is the same), whichever channel
// tells the review (docs/swarm-comments.md). The review's meta counts and
// names them, so the summary and e-mail say how to lift them; their
// fingerprints join Withheld, so a rerun does not call them resolved; each
// is recorded withheld (outcome.MarkWithheld).
func (d *Decider) withholdDismissed(ctx context.Context, j *job.Job, review domain.ReviewResult, cs *domain.Changeset) (domain.ReviewResult, error) {
	meta := domain.ReadReviewMeta(review.Meta)
	pol := d.Policy.WithRules(meta)
	keep, withheld, err := d.Outcomes.WithheldBy(ctx, review.Findings, pol)
	if err != nil || len(withheld) == 0 {
		return review, err
	}
	gone := rerun.Distinct(withheld, cs)
	for _, c := range gone {
		meta.Withheld = append(meta.Withheld, c.Fingerprint)
		f := c.Finding
		if _, err := d.Outcomes.MarkWithheld(ctx, outcome.Record{Review: j.Swarm.Review, Fingerprint: c.Fingerprint, File: f.File,
			Severity: strings.ToLower(f.Severity), Category: f.Category, RuleID: f.RuleID, JobID: j.ID, Kind: outcome.Kind(f), Scope: pol.Scope(f.File)}); err != nil {
			return review, err
		}
		k := domain.WithheldKind{Category: f.Category, Kind: outcome.Kind(f), Scope: pol.Scope(f.File)}
		if !slices.Contains(meta.WithheldKinds, k) {
			meta.WithheldKinds = append(meta.WithheldKinds, k)
		}
	}
	meta.WithheldAsDismissed += len(gone)
	merged := map[string]any{}
	maps.Copy(merged, review.Meta) // a model's own meta keys are kept
	maps.Copy(merged, meta.Map())
	review.Findings, review.Meta = keep, merged
	return review, nil
}

// compare is the rerun's comparison for j (nil for a first version or no
// ledger); resolved findings are shown by file, line and severity once the
// previous job's result has expired.
func (d *Decider) compare(ctx context.Context, j *job.Job, review domain.ReviewResult, current []rerun.Current, cs *domain.Changeset) (*rerun.Groups, error) {
	if d.Ledger == nil {
		return nil, nil
	}
	prev, err := d.Ledger.Previous(ctx, ledger.ThreadOf(j), j.ReviewVersion)
	if err != nil {
		return nil, fmt.Errorf("rerun ledger: %w", err)
	}
	meta := domain.ReadReviewMeta(review.Meta)
	g := rerun.Compare(prev, current, rerun.FullyReviewed(cs, meta), meta.Withheld)
	if g == nil || g.PreviousJob == "" || d.Jobs == nil || len(g.Resolved)+len(g.NotRechecked) == 0 {
		return g, nil
	}
	pj, err := d.Jobs.Get(ctx, g.PreviousJob)
	if errors.Is(err, job.ErrNotFound) || (err == nil && pj.Artifacts.Result == "") {
		return g, nil // the job's data has expired: identities only
	}
	if err != nil {
		return nil, fmt.Errorf("previous version's job: %w", err)
	}
	var was domain.ReviewResult
	if err := d.Artifacts.GetJSON(ctx, pj.Artifacts.Result, &was); failure.Classify(err) == failure.NotFound {
		return g, nil
	} else if err != nil {
		return nil, fmt.Errorf("previous version's result: %w", err)
	}
	g.Name(was)
	return g, nil
}

// resolve records the findings this version resolved as resolved, by the
// one precedence (a verified finding stays verified; a withheld one was
// not posted again and is never resolved). Their comments' reactions are
// read by the outcome pass (the sweeper, Swarm events), never here.
func (d *Decider) resolve(ctx context.Context, review int64, g *rerun.Groups) error {
	if len(g.Resolved) == 0 {
		return nil
	}
	gone := map[string]bool{}
	for _, e := range g.Resolved {
		gone[e.Fingerprint] = true
	}
	recs, err := d.Outcomes.Review(ctx, review)
	if err != nil {
		return err
	}
	for _, rec := range recs {
		if !gone[rec.Fingerprint] || rec.Fate == outcome.Withheld {
			continue
		}
		if _, err := d.Outcomes.ChangeFate(ctx, rec, outcome.Decide(rec.Fate, outcome.Verdict{Fate: outcome.Resolved}), rec.By); err != nil {
			return err
		}
	}
	return nil
}

// gate is what the Swarm run shows of a finished review: the count, and
// under a gate the findings at or above it with the worst one named in
// our own words (severity, category, file and line: no model prose). A
// finding's gate is the one its file's review rules set (gates, by
// finding ID; "off" for none), else the environment's.
func gate(count int, findings []domain.Finding, gates map[string]string, envGate string) swarm.Outcome {
	o := swarm.Outcome{Findings: count}
	worst := -1
	for i, f := range findings {
		g, ok := gates[f.ID]
		if !ok {
			g = envGate
		}
		if g == "" || g == "off" || !atOrAbove(f.Severity, g) {
			continue
		}
		o.Blocking++
		if worst < 0 || domain.SeverityRank(f.Severity) < domain.SeverityRank(findings[worst].Severity) {
			worst, o.Gate = i, g
		}
	}
	if worst >= 0 {
		f := findings[worst]
		o.Worst = fmt.Sprintf("%s %s finding in %s line %d", strings.ToLower(f.Severity), domain.CategoryWord(f.Category), path.Base(f.File), f.Line)
	}
	return o
}

// atOrAbove reports whether sev is gate or worse (domain.Severities runs
// worst first); no severity is at or above a gate that is none.
func atOrAbove(sev, gate string) bool {
	g := slices.Index(domain.Severities, gate)
	return g >= 0 && domain.SeverityRank(sev) <= g
}
