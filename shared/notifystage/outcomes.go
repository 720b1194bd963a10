package notifystage

import (
	"context"
	"strings"
	"time"

	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/job"
	fates "github.com/criticizer/criticizer/shared/outcome"
	"github.com/criticizer/criticizer/shared/rerun"
	"github.com/criticizer/criticizer/shared/swarm"
)

// Outcomes records what was posted on a Swarm review, as delivery
// bookkeeping (package outcome, docs/swarm-comments.md "Reactions"): each
// finding commented on, once, as open with what the acceptance report
// groups it by, and the review's place on the sweeper's watch list for
// Window after this version. Reactions are read by the outcome pass (the
// sweeper, Swarm events), never by a delivery attempt. nil on Notify
// turns it off.
type Outcomes struct {
	Store *fates.Store
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
// records nothing twice).
func (n *Notify) recordOutcomes(ctx context.Context, j *job.Job, review domain.ReviewResult, posted []commentDelivery) error {
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
