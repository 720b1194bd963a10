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

// Fetch is the fetch stage.
type Fetch struct {
	P4       ChangeFetcher
	Redactor ChangesetRedactor
	Raw      *artifacts.Store // raw namespace: short TTL, restricted
	Redacted *artifacts.Store // everything downstream reads from here only
	Log      *slog.Logger
}

// Process fetches the changelist, stores the raw and the redacted changeset
// and settles the recipient list.
func (f *Fetch) Process(ctx context.Context, job *store.Job) (store.Result, error) {
	cs, err := f.P4.Fetch(ctx, job.Changelist, job.Shelved)
	if err != nil {
		return store.Result{}, err
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
	redKey := artifacts.Key(job.ID, "changeset.json")
	if err := f.Redacted.PutJSON(ctx, redKey, red); err != nil {
		return store.Result{}, err
	}
	f.Log.InfoContext(ctx, "changeset fetched", "files", len(cs.Files), "redactions", rep.Total())

	recipients := slices.Clone(job.RequestedRecipients)
	if cs.UserEmail != "" {
		recipients = append(recipients, strings.ToLower(strings.TrimSpace(cs.UserEmail)))
	}
	slices.Sort(recipients)
	recipients = slices.Compact(recipients)
	if len(recipients) == 0 {
		return store.Result{}, failure.Errorf(failure.NotFound, "no recipients: the author %q has no e-mail address and the webhook named none", cs.User)
	}
	return store.Result{Artifacts: store.Artifacts{Raw: rawKey, Redacted: redKey}, Recipients: recipients,
		Detail: fmt.Sprintf("files %d, redactions %d", len(cs.Files), rep.Total())}, nil
}
