// Package fetchstage is the fetch stage's stage.Processor: it reads the
// changelist through p4 inside the depot allow-list and stores the raw and
// redacted changeset and the recipient list. A changeset streams through it
// file by file (spool), so its size costs disk, not memory.
package fetchstage

import (
	"bufio"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"sync/atomic"

	"github.com/criticizer/criticizer/shared/artifacts"
	"github.com/criticizer/criticizer/shared/delivery"
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/ledger"
	"github.com/criticizer/criticizer/shared/obs"
	"github.com/criticizer/criticizer/shared/p4"
	recipientpolicy "github.com/criticizer/criticizer/shared/recipients"
	"github.com/criticizer/criticizer/shared/redact"
	"github.com/criticizer/criticizer/shared/swarm"
)

// ChangeFetcher reads a changelist inside the depot allow-list, handing each
// file's diff (and interdiff) to sink as it arrives (p4.Fetcher.FetchSince).
type ChangeFetcher interface {
	FetchSince(ctx context.Context, changelist int64, shelved bool, since p4.Since, sink func(index int, file domain.FileChange) error) (domain.Changeset, error)
}

// Redactor removes secrets from text bound anywhere but the raw bucket, and
// seals what it redacted (redact.Redactor).
type Redactor interface {
	Redact(text string) (string, []redact.Match, error)
	SealDigest(sum [sha256.Size]byte) string
}

// ReviewReader reads a Helix Swarm review (swarm.Client).
type ReviewReader interface {
	GetReview(ctx context.Context, review int64) (swarm.Review, error)
}

// UserEmails answers a Perforce user's e-mail address (p4.Fetcher).
type UserEmails interface {
	UserEmail(ctx context.Context, user string) (string, error)
}

// FirstReviewed keeps who was on a Swarm review when first fetched, before
// any comment of ours: the noise filter's standing (outcome.Store).
type FirstReviewed interface {
	FirstFetched(ctx context.Context, review swarm.Review) error
}

// SwarmUpdater links a Swarm test run to its job (swarm.Reporter).
type SwarmUpdater interface {
	Update(ctx context.Context, j *job.Job) error
}

// RulesReader reads the review rules files at the allow-listed roots above
// the change's files, as of before the change (p4.Fetcher).
type RulesReader interface {
	RulesFiles(ctx context.Context, changelist int64, shelved bool, files []string, name string) ([]domain.RulesFile, error)
}

// Fetch is the fetch stage.
type Fetch struct {
	P4       ChangeFetcher
	Redactor Redactor
	Raw      *artifacts.Store // raw namespace: short TTL, restricted
	Redacted *artifacts.Store // everything downstream reads from here only
	Log      *slog.Logger
	SpoolDir string // local disk for the changeset while fetched; "": os.TempDir()
	// For Helix Swarm jobs; nil without SWARM_URL, and then a Swarm job
	// fails rather than e-mail Swarm's service user.
	Reviews  ReviewReader
	Users    UserEmails
	Swarm    SwarmUpdater
	Standing FirstReviewed // nil: tests
	// Rules reads the review rules files, stored beside the changeset
	// (domain.RulesArtifact) for the llm stage to parse.
	Rules RulesReader
	// Recipients holds the resolved recipients against the policy; nil
	// (tests only) checks nothing. Metrics counts its refusals.
	Recipients *recipientpolicy.Policy
	Metrics    *obs.Metrics
	// Ledger (the rerun ledger) marks files unchanged since the thread's
	// previous reviewed version as carried over; nil carries nothing.
	Ledger ledger.Entries
}

// Process fetches the changelist, stores the raw and the redacted changeset
// and settles the recipient list.
func (f *Fetch) Process(ctx context.Context, j *job.Job) (job.Result, error) {
	review, err := f.swarmStart(ctx, j)
	if err != nil {
		return job.Result{}, err
	}
	raw, err := newSpool(f.SpoolDir)
	if err != nil {
		return job.Result{}, failure.Wrap(failure.InternalBug, err)
	}
	defer raw.close()
	red, err := newSpool(f.SpoolDir)
	if err != nil {
		return job.Result{}, failure.Wrap(failure.InternalBug, err)
	}
	defer red.close()
	prev, err := f.previous(ctx, j)
	if err != nil {
		return job.Result{}, err
	}
	if err := f.recordStanding(ctx, review, prev); err != nil {
		return job.Result{}, err
	}
	fx := &fetched{raw: raw, red: red, prev: prev}
	if err := f.fetch(ctx, j, fx); err != nil {
		return job.Result{}, err
	}
	author, authorEmail, named := fx.cs.User, fx.cs.UserEmail, j.RequestedRecipients
	if j.Swarm != nil {
		// Swarm's archive change belongs to its service user: author and
		// participants come from Swarm, addresses from their user specs.
		author = review.Author
		if authorEmail, named, err = f.participantEmails(ctx, review); err != nil {
			return job.Result{}, err
		}
	}
	// Settled before anything is stored: no allowed recipient, no artifact.
	recipients, refused, err := f.recipients(ctx, j, named, author, authorEmail)
	if err != nil {
		return job.Result{}, err
	}
	f.notePrevious(ctx, fx)
	res, err := f.storeChangeset(ctx, j, fx, author)
	if err != nil {
		return job.Result{}, err
	}
	if err := f.storeRules(ctx, j, fx.cs); err != nil {
		return job.Result{}, err
	}
	f.Log.InfoContext(ctx, "changeset fetched", "files", len(fx.cs.Files), "redactions", fx.redactions.Load())
	res.Recipients, res.Detail = recipients, fx.detail(authorEmail, refused)
	return res, nil
}

// swarmStart holds a Swarm run to its own review before anything is fetched
// and links the run to the job (best effort); zero for a non-Swarm job.
func (f *Fetch) swarmStart(ctx context.Context, j *job.Job) (swarm.Review, error) {
	if j.Swarm == nil {
		return swarm.Review{}, nil
	}
	review, err := f.swarmReview(ctx, j)
	if err != nil {
		return swarm.Review{}, err
	}
	if f.Swarm != nil {
		if err := f.Swarm.Update(ctx, j); err != nil {
			f.Log.WarnContext(ctx, "swarm update callback failed; the next attempt or the result callback covers it", "err", err, "error_class", failure.Classify(err))
		}
	}
	return review, nil
}

// fetched is one Process call's changeset, spooled, and its counts.
type fetched struct {
	cs       domain.Changeset
	raw, red *spool
	prev     *ledger.Version

	redactions, carried, interdiffs atomic.Int64
}

// fetch fetches the changelist into fx, each file spooled raw, then redacted
// (both diffs may reach the model) and spooled again; files unchanged since
// the previous version are marked carried over.
func (f *Fetch) fetch(ctx context.Context, j *job.Job, fx *fetched) error {
	carryable := fx.prev.Carryable()
	cs, err := f.P4.FetchSince(ctx, j.Changelist, j.Shelved, interdiffSince(j, fx.prev, carryable), func(i int, fc domain.FileChange) error {
		// Only a file with its diff is carried: fingerprints are read from it.
		if pf, ok := carryable[fc.DepotPath]; ok && pf.Unchanged(fc) {
			fc.CarriedFrom = fx.prev.Version
			fx.carried.Add(1)
		}
		if fc.InterdiffFrom > 0 {
			fx.interdiffs.Add(1)
		}
		if err := fx.raw.add(i, fc); err != nil {
			return failure.Wrap(failure.InternalBug, err)
		}
		for _, d := range []*string{&fc.Diff, &fc.Interdiff} {
			text, ms, err := f.Redactor.Redact(*d)
			if err != nil {
				// Fail closed; the path is not secret, the content not included.
				return failure.Errorf(failure.InternalBug, "redaction of %s failed: %w", fc.DepotPath, err)
			}
			fx.redactions.Add(int64(len(ms)))
			*d = text
		}
		return fx.red.add(i, fc)
	})
	fx.cs = cs
	return err
}

// notePrevious links the changeset to the previous version it used.
func (f *Fetch) notePrevious(ctx context.Context, fx *fetched) {
	if n, m := fx.carried.Load(), fx.interdiffs.Load(); n+m > 0 {
		fx.cs.Previous = &domain.PreviousReview{Version: fx.prev.Version, JobID: fx.prev.JobID}
		f.Log.InfoContext(ctx, "files carried over or diffed against the previous version", "carried_files", n,
			"interdiff_files", m, "files", len(fx.cs.Files), "previous_version", fx.prev.Version, "previous_job", fx.prev.JobID)
	}
}

// storeChangeset stores the raw changeset, then the redacted one (no author
// address; a Swarm run's user is the review's author), and seals its digest:
// the llm stage verifies this proof instead of scanning the diffs again.
func (f *Fetch) storeChangeset(ctx context.Context, j *job.Job, fx *fetched, author string) (job.Result, error) {
	cs := fx.cs
	rawKey := artifacts.Key(j.ID, "changeset.raw.json")
	if _, err := f.store(ctx, f.Raw, rawKey, fx.raw, cs); err != nil {
		return job.Result{}, err
	}
	redCS := cs
	desc, ms, err := f.Redactor.Redact(cs.Description)
	if err != nil {
		return job.Result{}, failure.Errorf(failure.InternalBug, "redaction of the description failed: %w", err)
	}
	fx.redactions.Add(int64(len(ms)))
	redCS.Description = desc
	redCS.UserEmail = "" // the recipient list lives in the job; keep PII out of the shared artifact
	if j.Swarm != nil {
		redCS.User = author // the e-mail names the review's author, not Swarm's service user
	}
	redKey := artifacts.Key(j.ID, "changeset.json")
	sum, err := f.store(ctx, f.Redacted, redKey, fx.red, redCS)
	if err != nil {
		return job.Result{}, err
	}
	return job.Result{Artifacts: job.Artifacts{Raw: rawKey, Redacted: redKey, RedactedProof: f.Redactor.SealDigest(sum)}}, nil
}

// detail is the job history's line for the fetch.
func (fx *fetched) detail(authorEmail string, refused []recipientpolicy.Refusal) string {
	detail := fmt.Sprintf("files %d, redactions %d", len(fx.cs.Files), fx.redactions.Load())
	if n := fx.carried.Load(); n > 0 {
		detail += fmt.Sprintf(", carried over %d unchanged from version %d", n, fx.prev.Version)
	}
	if n := fx.interdiffs.Load(); n > 0 {
		detail += fmt.Sprintf(", %d diffed against version %d's shelf", n, fx.prev.Version)
	}
	if authorEmail != "" && delivery.Canonical(authorEmail) != authorEmail {
		// The address was trimmed or lower-cased (a reason code, never the address).
		detail += "; adjusted: " + ReasonAuthorAddressCanonicalized
	}
	if len(refused) > 0 {
		detail += "; not e-mailed, outside the recipient policy: " + recipientpolicy.Describe(refused)
	}
	return detail
}

// previous is the thread's latest ledger entry below the job's version (nil:
// none); a failed read fails the attempt like any dependency.
func (f *Fetch) previous(ctx context.Context, j *job.Job) (*ledger.Version, error) {
	if f.Ledger == nil || j.ReviewVersion <= 1 {
		return nil, nil
	}
	prev, err := f.Ledger.Previous(ctx, ledger.ThreadOf(j), j.ReviewVersion)
	if err != nil {
		return nil, fmt.Errorf("rerun ledger: %w", err)
	}
	return prev, nil
}

// interdiffSince picks the files to diff against the previous version's
// shelf: for a Swarm review (distinct archive changes), those changed since
// a version that reviewed them in full, same base. A changelist rerun's one
// shelf is overwritten: nothing to diff against.
func interdiffSince(j *job.Job, prev *ledger.Version, carryable map[string]ledger.File) p4.Since {
	if prev == nil || j.Swarm == nil || !j.Shelved || prev.Thread.Kind != ledger.KindReview {
		return p4.Since{}
	}
	return p4.Since{Change: prev.Change, Version: prev.Version, Wants: func(fc domain.FileChange) bool {
		pf, ok := carryable[fc.DepotPath]
		return ok && pf.Comparable(fc) && !pf.Unchanged(fc)
	}}
}

// ReasonAuthorAddressCanonicalized says the author's address was trimmed or
// lower-cased before it became a recipient.
const ReasonAuthorAddressCanonicalized = "coercion_applied/author_address_canonicalized"

// recipients settles who gets the review: the named addresses and the
// author's, canonicalized, held against the recipient policy (one outside it
// is a security event, never e-mailed). None allowed is POLICY_REJECTED
// (some refused) or NOT_FOUND (none at all).
func (f *Fetch) recipients(ctx context.Context, j *job.Job, named []string, author, authorEmail string) (allowed []string, refused []recipientpolicy.Refusal, err error) {
	candidates := make([]string, 0, len(named)+1)
	for _, r := range named {
		candidates = append(candidates, delivery.Canonical(r))
	}
	if authorEmail != "" {
		candidates = append(candidates, delivery.Canonical(authorEmail))
	}
	slices.Sort(candidates)
	candidates = slices.Compact(candidates)
	allowed = candidates
	if f.Recipients != nil {
		allowed, refused = f.Recipients.Split(candidates)
		recipientpolicy.Report(ctx, f.Log, f.Metrics, string(domain.StageFetch), j.Source, refused)
	}
	switch {
	case len(allowed) > 0:
		return allowed, refused, nil
	case len(refused) > 0:
		return nil, refused, failure.Errorf(failure.PolicyRejected, "no recipient allowed by the recipient policy: %s", recipientpolicy.Describe(refused))
	}
	return nil, nil, failure.Errorf(failure.NotFound, "no recipients: the author %q has no e-mail address and the webhook named none", author)
}

// store writes the changeset artifact from sp at key through a local file
// (S3 wants a length and a re-readable body) and returns its SHA-256.
func (f *Fetch) store(ctx context.Context, dst *artifacts.Store, key string, sp *spool, cs domain.Changeset) ([sha256.Size]byte, error) {
	var sum [sha256.Size]byte
	tmp, err := os.CreateTemp(f.SpoolDir, "criticizer-artifact-*")
	if err != nil {
		return sum, failure.Wrap(failure.InternalBug, fmt.Errorf("artifact %s: %w", key, err))
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	h := sha256.New()
	buf := bufio.NewWriterSize(io.MultiWriter(tmp, h), 256<<10)
	err = sp.writeArtifact(buf, cs)
	if err == nil {
		err = buf.Flush()
	}
	if err != nil {
		return sum, failure.Wrap(failure.InternalBug, fmt.Errorf("artifact %s: %w", key, err))
	}
	if err := dst.PutReader(ctx, key, tmp); err != nil {
		return sum, err
	}
	h.Sum(sum[:0])
	return sum, nil
}

// storeRules stores the rules files that apply to cs, redacted (their text
// enters the prompt); what they say is the llm stage's business.
func (f *Fetch) storeRules(ctx context.Context, j *job.Job, cs domain.Changeset) error {
	if f.Rules == nil {
		return nil
	}
	files, err := f.Rules.RulesFiles(ctx, j.Changelist, j.Shelved, cs.ChangedFiles(), domain.RulesFileName)
	if err != nil {
		return fmt.Errorf("review rules: %w", err)
	}
	if len(files) == 0 {
		return nil
	}
	for i := range files {
		text, _, err := f.Redactor.Redact(files[i].Content)
		if err != nil {
			return failure.Errorf(failure.InternalBug, "redaction of the review rules %s failed: %w", files[i].Source, err)
		}
		files[i].Content = text
	}
	f.Log.InfoContext(ctx, "review rules read", "rules_files", len(files))
	return f.Redacted.PutJSON(ctx, artifacts.Key(j.ID, domain.RulesArtifact), files)
}

// swarmReview holds the run to its review: the changelist must be one of its
// versions, or anyone starting a run could have any change reviewed and
// e-mailed under any review.
func (f *Fetch) swarmReview(ctx context.Context, j *job.Job) (swarm.Review, error) {
	if f.Reviews == nil || f.Users == nil {
		return swarm.Review{}, failure.Errorf(failure.InternalBug, "job from Helix Swarm but SWARM_URL / SWARM_API_SECRET_ID are not configured on the fetch function")
	}
	review, err := f.Reviews.GetReview(ctx, j.Swarm.Review)
	if err != nil {
		return swarm.Review{}, fmt.Errorf("swarm review %d: %w", j.Swarm.Review, err)
	}
	if !review.HasChange(j.Changelist) {
		return swarm.Review{}, failure.Errorf(failure.PolicyRejected, "change %d is not a version of Swarm review %d: nothing fetched", j.Changelist, j.Swarm.Review)
	}
	return review, nil
}

// recordStanding keeps who is on the review at its first fetch (a version
// after one the ledger holds was not the first).
func (f *Fetch) recordStanding(ctx context.Context, review swarm.Review, prev *ledger.Version) error {
	if f.Standing == nil || review.ID == 0 || prev != nil {
		return nil
	}
	if err := f.Standing.FirstFetched(ctx, review); err != nil {
		return fmt.Errorf("swarm review %d as first fetched: %w", review.ID, err)
	}
	return nil
}

// participantEmails resolves the review author's address (required) and
// the other participants' (one without an address is skipped).
func (f *Fetch) participantEmails(ctx context.Context, review swarm.Review) (authorEmail string, others []string, err error) {
	authorEmail, err = f.Users.UserEmail(ctx, review.Author)
	if err != nil {
		return "", nil, fmt.Errorf("e-mail of swarm review %d's author: %w", review.ID, err)
	}
	for _, u := range review.Participants {
		if u == review.Author {
			continue
		}
		email, err := f.Users.UserEmail(ctx, u)
		switch {
		case err != nil:
			return "", nil, fmt.Errorf("e-mail of a participant of swarm review %d: %w", review.ID, err)
		case email == "":
			f.Log.InfoContext(ctx, "a review participant has no e-mail address; not e-mailed", "review", review.ID)
		default:
			others = append(others, email)
		}
	}
	return authorEmail, others, nil
}
