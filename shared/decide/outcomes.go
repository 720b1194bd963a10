package decide

import (
	"cmp"
	"context"
	"strings"

	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/outcome"
)

// Outcomes records what the notify stage told of a decided review, as
// delivery bookkeeping (package outcome, docs/swarm-comments.md
// "Reactions"): each finding commented on, once, as open with what the
// acceptance report groups it by (its scope decided with the review,
// Decided.Scopes), and the review's place on the sweeper's watch list.
// Reactions are read by the outcome pass (the sweeper, Swarm events),
// never by a delivery attempt. Every write is conditional, so a retry
// records nothing twice.
type Outcomes struct {
	Store *outcome.Store
	Now   job.Clock
}

// record is d's distinct finding c as the outcome records hold it: no
// model text.
func record(j *job.Job, d *Decided, c int) outcome.Record {
	meta := domain.ReadReviewMeta(d.Result.Meta)
	pv := cmp.Or(meta.PromptVersion, d.Result.PromptVersion)
	f := d.Current[c].Finding
	return outcome.Record{Fingerprint: d.Current[c].Fingerprint, File: f.File, Severity: strings.ToLower(f.Severity),
		Category: f.Category, RuleID: f.RuleID, PromptVersion: pv, Model: meta.Model, JobID: j.ID, Kind: outcome.Kind(f)}
}

// Posted records the findings commented on j's Swarm review (by
// fingerprint) as open and watches the review for a window after this
// version.
func (o *Outcomes) Posted(ctx context.Context, j *job.Job, d *Decided, fingerprints []string) error {
	rv := j.Swarm.Review
	posted := map[string]bool{}
	for _, fp := range fingerprints {
		posted[fp] = true
	}
	for i, c := range d.Current {
		if !posted[c.Fingerprint] {
			continue
		}
		rec := record(j, d, i)
		rec.Review, rec.Scope = rv, d.Scopes[c.Fingerprint]
		if _, err := o.Store.Posted(ctx, rec); err != nil {
			return err
		}
	}
	now := o.Now.Now()
	return o.Store.Watch(ctx, rv, now.Add(outcome.DefaultInterval), now.Add(outcome.DefaultWindow))
}

// EmailOnly records the findings of a job with no Swarm review: told by
// e-mail only, their fate is unknown, never accepted.
func (o *Outcomes) EmailOnly(ctx context.Context, j *job.Job, d *Decided) error {
	for i := range d.Current {
		if _, err := o.Store.EmailOnly(ctx, j.Changelist, record(j, d, i)); err != nil {
			return err
		}
	}
	return nil
}
