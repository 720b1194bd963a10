// Package fetchstage is the fetch stage's stage.Processor: it reads the
// changelist through p4 inside the depot allow-list and stores the raw and
// redacted changeset artifacts and the recipient list. Leases, retries and
// dead letters are the stage runtime's business, not its own.
package fetchstage

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/criticizer/criticizer/shared/artifacts"
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/redact"
	"github.com/criticizer/criticizer/shared/store"
)

// ChangeFetcher reads a changelist from Perforce inside the depot allow-list.
type ChangeFetcher interface {
	Fetch(ctx context.Context, changelist int64, shelved bool) (domain.Changeset, error)
}

// ChangesetRedactor removes secrets from a changeset before it goes anywhere
// but the raw bucket.
type ChangesetRedactor interface {
	Changeset(cs domain.Changeset) (domain.Changeset, redact.Report, error)
}

// ReviewAuthors answers who wrote a Helix Swarm review (swarm.Client).
type ReviewAuthors interface {
	ReviewAuthor(ctx context.Context, review int64) (string, error)
}

// UserEmails answers a Perforce user's e-mail address (p4.Fetcher).
type UserEmails interface {
	UserEmail(ctx context.Context, user string) (string, error)
}

// SwarmUpdater links a Swarm test run to its job (swarm.Reporter).
type SwarmUpdater interface {
	Update(ctx context.Context, job *store.Job) error
}

// Fetch is the fetch stage.
type Fetch struct {
	P4       ChangeFetcher
	Redactor ChangesetRedactor
	Raw      *artifacts.Store // raw namespace: short TTL, restricted
	Redacted *artifacts.Store // everything downstream reads from here only
	Log      *slog.Logger
	// For Helix Swarm jobs; nil when SWARM_URL is not configured, and then
	// a Swarm job fails rather than e-mail Swarm's service user.
	Reviews ReviewAuthors
	Users   UserEmails
	Swarm   SwarmUpdater
}

// Process fetches the changelist, stores the raw and the redacted changeset
// and settles the recipient list.
func (f *Fetch) Process(ctx context.Context, job *store.Job) (store.Result, error) {
	if job.Swarm != nil && f.Swarm != nil {
		// Best effort: a run not yet linked still gets {pass}/{fail} at the end.
		if err := f.Swarm.Update(ctx, job); err != nil {
			f.Log.WarnContext(ctx, "swarm update callback failed; the next attempt or the result callback covers it", "err", err, "error_class", failure.Classify(err))
		}
	}
	cs, err := f.P4.Fetch(ctx, job.Changelist, job.Shelved)
	if err != nil {
		return store.Result{}, err
	}
	author, authorEmail := cs.User, cs.UserEmail
	if job.Swarm != nil {
		// Swarm's archive change belongs to its service user: the review's
		// author comes from Swarm, the address from that author's user spec.
		if author, authorEmail, err = f.swarmAuthor(ctx, job.Swarm.Review); err != nil {
			return store.Result{}, err
		}
	}
	rawKey := artifacts.Key(job.ID, "changeset.raw.json")
	if err := f.Raw.PutJSON(ctx, rawKey, cs); err != nil {
		return store.Result{}, err
	}
	red, rep, err := f.Redactor.Changeset(cs)
	if err != nil {
		// Fail closed: nothing un-redacted may move on.
		return store.Result{}, failure.Errorf(failure.InternalBug, "redaction failed: %w", err)
	}
	red.UserEmail = "" // the recipient list lives in the job; keep PII out of the shared artifact
	if job.Swarm != nil {
		red.User = author // the e-mail names the review's author, not Swarm's service user
	}
	redKey := artifacts.Key(job.ID, "changeset.json")
	if err := f.Redacted.PutJSON(ctx, redKey, red); err != nil {
		return store.Result{}, err
	}
	f.Log.InfoContext(ctx, "changeset fetched", "files", len(cs.Files), "redactions", rep.Total())

	recipients := slices.Clone(job.RequestedRecipients)
	if authorEmail != "" {
		recipients = append(recipients, strings.ToLower(strings.TrimSpace(authorEmail)))
	}
	slices.Sort(recipients)
	recipients = slices.Compact(recipients)
	if len(recipients) == 0 {
		return store.Result{}, failure.Errorf(failure.NotFound, "no recipients: the author %q has no e-mail address and the webhook named none", author)
	}
	return store.Result{Artifacts: store.Artifacts{Raw: rawKey, Redacted: redKey}, Recipients: recipients,
		Detail: fmt.Sprintf("files %d, redactions %d", len(cs.Files), rep.Total())}, nil
}

// swarmAuthor resolves a Swarm review's author and e-mail address.
func (f *Fetch) swarmAuthor(ctx context.Context, review int64) (string, string, error) {
	if f.Reviews == nil || f.Users == nil {
		return "", "", failure.Errorf(failure.InternalBug, "job from Helix Swarm but SWARM_URL / SWARM_API_SECRET_ID are not configured on the fetch function")
	}
	author, err := f.Reviews.ReviewAuthor(ctx, review)
	if err != nil {
		return "", "", fmt.Errorf("author of swarm review %d: %w", review, err)
	}
	email, err := f.Users.UserEmail(ctx, author)
	if err != nil {
		return "", "", fmt.Errorf("e-mail of swarm review %d's author: %w", review, err)
	}
	return author, email, nil
}
