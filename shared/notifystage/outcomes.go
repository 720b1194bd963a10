package notifystage

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/criticizer/criticizer/shared/digest"
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/job"
	fates "github.com/criticizer/criticizer/shared/outcome"
	"github.com/criticizer/criticizer/shared/rerun"
	"github.com/criticizer/criticizer/shared/swarm"
)

// Outcomes records what reviewers do with the findings posted on a Swarm
// review (package outcome, docs/swarm-comments.md "Reactions"): each
// finding commented on, once, as open with what the acceptance report
// groups it by; at each later version the reactions on the earlier ones,
// with the rerun's resolved set; and the review's place on the sweeper's
// watch list for Window after this version. nil on Notify turns it off.
type Outcomes struct {
	Store  *fates.Store
	Reader *fates.Reader
	// Window (OUTCOME_WINDOW_DAYS) and Interval: how long after a review's
	// last version the sweeper reads its reactions, and how often.
	Window, Interval time.Duration
	// Policy is the noise filter (outcome.PolicyFromEnv), the one the
	// digest, `criticizer outcomes` and the job page read too; a review
	// rules file's dismissal_suppression and gate apply per finding.
	Policy fates.Policy
}

// policy is the noise filter for one review: the environment's, with what
// the rules of each finding's file set (ReviewMeta.SuppressAfter, Gates).
func (o *Outcomes) policy(meta domain.ReviewMeta) fates.Policy { return o.Policy.WithRules(meta) }

// recordOutcomes runs after the comments are posted. Writing the records
// fails the attempt (retried; every write is conditional, so a retry
// records nothing twice); reading the reactions does not, as the sweeper
// reads them again.
func (n *Notify) recordOutcomes(ctx context.Context, j *job.Job, review domain.ReviewResult, posted []commentDelivery, g *rerun.Groups) error {
	o, rv := n.Outcomes, j.Swarm.Review
	meta := domain.ReadReviewMeta(review.Meta)
	pv := meta.PromptVersion
	if pv == "" {
		pv = review.PromptVersion
	}
	for _, d := range posted {
		fp, _ := strings.CutPrefix(d.item.ID, swarm.KindFinding+"/")
		f := d.finding
		if _, err := o.Store.Posted(ctx, fates.Record{Review: rv, Fingerprint: fp, File: f.File, Severity: strings.ToLower(f.Severity),
			Category: f.Category, RuleID: f.RuleID, PromptVersion: pv, Model: meta.Model, JobID: j.ID, Kind: fates.Kind(*f), Scope: o.policy(meta).Scope(f.File)}); err != nil {
			return err
		}
	}
	if g != nil {
		var resolved []string
		for _, e := range g.Resolved {
			resolved = append(resolved, e.Fingerprint)
		}
		if t, err := o.Reader.Read(ctx, rv, resolved); err != nil {
			n.Log.WarnContext(ctx, "reading the review's reactions failed; the sweeper reads them later", "err", err)
		} else {
			n.Log.InfoContext(ctx, "review reactions read", "read", t.Read, "fates_changed", t.FatesChanged, "unknown", t.Unknown)
		}
	}
	now := n.Now.Now()
	return o.Store.Watch(ctx, rv, now.Add(o.interval()), now.Add(o.window()))
}

func (o *Outcomes) window() time.Duration {
	if o.Window > 0 {
		return o.Window
	}
	return fates.DefaultWindow
}

func (o *Outcomes) interval() time.Duration {
	if o.Interval > 0 {
		return o.Interval
	}
	return fates.DefaultInterval
}

// withholdDismissed drops the findings of a kind people with a say
// under their depot path dismissed repeatedly and never accepted
// (outcome.WithheldBy under the policy; never one at or above its gate,
// security, or a committed secret, so the run's gate result is the same).
// They are counted and their kinds named in the review's meta, which the
// Swarm summary and the e-mail show with how to lift them; their
// fingerprints join Withheld, so a rerun does not call them resolved; and
// each is recorded as withheld (outcome.MarkWithheld), never as resolved
// or judged.
func (n *Notify) withholdDismissed(ctx context.Context, j *job.Job, review domain.ReviewResult, cs *domain.Changeset) (domain.ReviewResult, error) {
	meta := domain.ReadReviewMeta(review.Meta)
	pol := n.Outcomes.policy(meta)
	keep, withheld, err := n.Outcomes.Store.WithheldBy(ctx, review.Findings, pol)
	if err != nil || len(withheld) == 0 {
		return review, err
	}
	gone := rerun.Distinct(withheld, cs)
	for _, c := range gone {
		meta.Withheld = append(meta.Withheld, c.Fingerprint)
		f := c.Finding
		if _, err := n.Outcomes.Store.MarkWithheld(ctx, fates.Record{Review: j.Swarm.Review, Fingerprint: c.Fingerprint, File: f.File,
			Severity: strings.ToLower(f.Severity), Category: f.Category, RuleID: f.RuleID, JobID: j.ID, Kind: fates.Kind(f), Scope: pol.Scope(f.File)}); err != nil {
			return review, err
		}
		k := domain.WithheldKind{Category: f.Category, Kind: fates.Kind(f), Scope: pol.Scope(f.File)}
		if !slices.Contains(meta.WithheldKinds, k) {
			meta.WithheldKinds = append(meta.WithheldKinds, k)
		}
	}
	meta.WithheldAsDismissed += len(gone)
	merged := map[string]any{}
	for k, v := range review.Meta {
		merged[k] = v // a model's own meta keys are kept
	}
	for k, v := range meta.Map() {
		merged[k] = v
	}
	review.Findings, review.Meta = keep, merged
	return review, nil
}

// recordEmailOnly records the findings of a job with no Swarm review: told
// by e-mail only, their fate is unknown, never accepted.
func (n *Notify) recordEmailOnly(ctx context.Context, j *job.Job, review domain.ReviewResult, current []rerun.Current) error {
	meta := domain.ReadReviewMeta(review.Meta)
	pv := meta.PromptVersion
	if pv == "" {
		pv = review.PromptVersion
	}
	for _, c := range current {
		f := c.Finding
		if _, err := n.Outcomes.Store.EmailOnly(ctx, j.Changelist, fates.Record{Fingerprint: c.Fingerprint, File: f.File, Severity: strings.ToLower(f.Severity),
			Category: f.Category, RuleID: f.RuleID, PromptVersion: pv, Model: meta.Model, JobID: j.ID, Kind: fates.Kind(f)}); err != nil {
			return err
		}
	}
	return nil
}

// recordDigest adds the job to the weekly digest of the week it was created
// in (so a retry writes the same entry): what it reported, after any
// withheld, its tokens and estimated cost. A failed write retries the
// attempt, whose outbox skips what was sent.
func (n *Notify) recordDigest(ctx context.Context, j *job.Job, review domain.ReviewResult, current []rerun.Current, cs *domain.Changeset) error {
	if n.Digest == nil {
		return nil
	}
	created, err := job.ParseTime(j.CreatedAt)
	if err != nil {
		created = n.Now.Now()
	}
	return n.Digest.Record(ctx, digest.WeekOf(created), digest.EntryOf(j, review, current, cs))
}
