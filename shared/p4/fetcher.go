package p4

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/criticizer/criticizer/shared/depot"
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/failure"
)

// CommandRunner runs one p4 command; *Runner is the production one.
type CommandRunner interface {
	Run(ctx context.Context, command string, args ...string) ([]Record, error)
}

// Defaults for the zero values of Options.
const (
	DefaultParallelism  = 4
	DefaultBatchFiles   = 200     // file specs per print command
	DefaultBatchBytes   = 8 << 20 // content per print command, by describe's fileSize
	DefaultMaxFileBytes = 2 << 20 // larger files are listed, not diffed (P4_MAX_FILE_BYTES)
)

// Options tune how a Fetcher talks to the server. The zero value is usable.
type Options struct {
	Parallelism int // p4 processes at once (P4_PARALLELISM)
	// BatchFiles bounds one print command (and DefaultBatchBytes its
	// content): a few large round trips, each answer small enough to hold.
	BatchFiles int
	// MaxFileBytes (P4_MAX_FILE_BYTES): a larger file is listed without a
	// diff, marked domain.OverFileBytes.
	MaxFileBytes int64
	// ServerRole (P4_SERVER_ROLE): RoleStandard, or RoleCommit / RoleEdge in
	// a commit-edge installation, where an edge's shelf is visible elsewhere
	// only once promoted.
	ServerRole string
}

// Server roles (P4_SERVER_ROLE).
const (
	RoleStandard = "standard"
	RoleCommit   = "commit"
	RoleEdge     = "edge"
)

func (o Options) withDefaults() Options {
	o.Parallelism = cmp.Or(max(o.Parallelism, 0), DefaultParallelism)
	o.BatchFiles = cmp.Or(max(o.BatchFiles, 0), DefaultBatchFiles)
	o.MaxFileBytes = cmp.Or(max(o.MaxFileBytes, 0), DefaultMaxFileBytes)
	o.ServerRole = cmp.Or(o.ServerRole, RoleStandard)
	return o
}

// Fetcher is the ChangeFetcher of rule AL-2: the single enforcement point of the
// depot allow-list for changelist retrieval and file expansion.
type Fetcher struct {
	p4    CommandRunner
	allow *depot.AllowList
	log   *slog.Logger
	opt   Options

	checkProtects bool         // CheckProtections
	protects      atomic.Value // digest of the last table judged sound
}

// NewFetcher returns a Fetcher that runs commands with p4 and admits only
// files inside allow.
func NewFetcher(p4 CommandRunner, allow *depot.AllowList, log *slog.Logger) (*Fetcher, error) {
	if p4 == nil || allow == nil {
		return nil, failure.Errorf(failure.InternalBug, "p4.NewFetcher needs a runner and an allow-list")
	}
	log = cmp.Or(log, slog.New(slog.DiscardHandler))
	return &Fetcher{p4: p4, allow: allow, log: log, opt: Options{}.withDefaults()}, nil
}

// WithOptions sets how the Fetcher batches and parallelises commands.
func (f *Fetcher) WithOptions(o Options) *Fetcher {
	f.opt = o.withDefaults()
	return f
}

// Fetch retrieves a changelist and the diff of each of its files:
//
//  0. with CheckProtections: p4 protects (the allow-list sees whole changes)
//  1. p4 -ztag -Mj describe -s [-S] <cl>
//  2. allow-list check of every file: one denied file, or none listed,
//     rejects the changelist before any other command
//  3. submitted moves: filelog -m1 <new>#<rev>… (batched) for their origin
//  4. print -k <spec>… in batches, Options.Parallelism at once, each
//     re-checking the allow-list; diffs computed here (shared/udiff):
//     edit/integrate:  <path>#<rev-1> → <path>#<rev>
//     move/add:        <old path>#<old rev> → <path>#<rev>
//     add/branch:      nothing → <path>#<rev>
//     delete, move/delete, binary or over MaxFileBytes: listed only
//     (shelved: new side <path>@=<cl>, old side the base revision)
//  5. p4 -ztag -Mj user -o <user> for the author's Email
//
// Any failure returns no changeset: a partial fetch is never handed on.
func (f *Fetcher) Fetch(ctx context.Context, changelist int64, shelved bool) (domain.Changeset, error) {
	var (
		mu    sync.Mutex
		files = map[int]domain.FileChange{}
	)
	cs, err := f.FetchSince(ctx, changelist, shelved, Since{}, func(i int, fc domain.FileChange) error {
		mu.Lock()
		defer mu.Unlock()
		files[i] = fc
		return nil
	})
	if err != nil {
		return domain.Changeset{}, err
	}
	for i, fc := range files {
		cs.Files[i] = fc
	}
	return cs, nil
}

// Since names an earlier shelf of the same review (a Swarm review's previous
// version) that the files Wants picks are also diffed against, as `p4 diff2
// -du FILE@=Change FILE@=changelist` would: their Interdiff, labelled
// InterdiffFrom = Version. The zero value diffs nothing more.
type Since struct {
	Change  int64
	Version int
	Wants   func(domain.FileChange) bool
}

func (s Since) wants(changelist int64, shelved bool, fc domain.FileChange) bool {
	return shelved && s.Change > 0 && s.Change != changelist && s.Version > 0 && s.Wants != nil && s.Wants(fc)
}

// FetchSince is Fetch for changelists too large to hold: each diffed file
// goes to sink (by its index in Files, concurrently, in no order) as its
// batch arrives; sink's error stops the fetch, and on an error whatever sink
// received must be discarded. The returned changeset has empty Diffs. The
// files since picks also get their interdiffs (step 4 prints
// <path>@=<since.Change> in the same batches, through the same allow-list
// re-check); an unreadable earlier shelf costs only the interdiffs.
func (f *Fetcher) FetchSince(ctx context.Context, changelist int64, shelved bool, since Since, sink func(index int, file domain.FileChange) error) (domain.Changeset, error) {
	start := time.Now()
	if changelist <= 0 {
		return domain.Changeset{}, failure.Errorf(failure.SchemaInvalid, "changelist must be positive, got %d", changelist)
	}
	if _, err := f.verifyProtections(ctx); err != nil {
		return domain.Changeset{}, err
	}
	cs, sizes, err := f.describe(ctx, changelist, shelved)
	if err != nil {
		return domain.Changeset{}, err
	}
	if len(cs.Files) == 0 && shelved {
		if err := f.shelfNotVisible(changelist, nil); err != nil {
			return domain.Changeset{}, err
		}
	}
	// describe silently omits files the service user may not list: none at
	// all may mean "all hidden", which the allow-list cannot vouch for.
	if len(cs.Files) == 0 {
		f.log.Warn("changelist rejected: describe lists no file the service user may see",
			"event", "changelist_no_visible_files", "security_event", true,
			"changelist", changelist, "shelved", shelved)
		return domain.Changeset{}, failure.Errorf(failure.PolicyRejected,
			"changelist %d: describe lists no files (all hidden from the service user by protections, or none shelved); rejected, nothing is reviewed", changelist)
	}

	// Every file is checked before any is fetched.
	denied := 0
	var firstErr error
	for _, fc := range cs.Files {
		if err := f.allow.Check(fc.DepotPath); err != nil {
			denied++
			if firstErr == nil {
				firstErr = err
			}
		}
	}
	if firstErr != nil {
		f.log.Warn("changelist rejected by depot allow-list",
			"event", "changelist_rejected",
			"changelist", changelist,
			"shelved", shelved,
			"files", len(cs.Files),
			"denied_files", denied)
		return domain.Changeset{}, firstErr
	}

	plans, err := f.plan(ctx, changelist, shelved, cs.Files, sizes, since)
	if err != nil {
		return domain.Changeset{}, err
	}
	if err := f.fetchDiffs(ctx, plans, cs.Files, sink); err != nil {
		return domain.Changeset{}, err
	}

	email, err := f.UserEmail(ctx, cs.User)
	if err != nil {
		return domain.Changeset{}, err
	}
	cs.UserEmail = email

	f.log.Info("changelist fetched",
		"changelist", changelist,
		"shelved", shelved,
		"files", len(cs.Files),
		"diffed_files", len(plans),
		"duration_ms", time.Since(start).Milliseconds())
	return cs, nil
}

func (f *Fetcher) describe(ctx context.Context, changelist int64, shelved bool) (domain.Changeset, []int64, error) {
	args := []string{"-s"}
	if shelved {
		args = append(args, "-S")
	}
	args = append(args, strconv.FormatInt(changelist, 10))
	recs, err := f.p4.Run(ctx, "describe", args...)
	if shelved && failure.Classify(err) == failure.NotFound {
		return domain.Changeset{}, nil, f.shelfNotVisible(changelist, err)
	}
	if err != nil {
		return domain.Changeset{}, nil, err
	}
	// describe's record: change, user, client, time, desc, status and the
	// indexed file fields (reference, "Output channel and record shapes";
	// git-p4's p4_describe and P4Python read the same keys).
	rec := first(recs, "change")
	if rec == nil {
		return domain.Changeset{}, nil, failure.Errorf(failure.SchemaInvalid, "p4 describe %d: no change record in output", changelist)
	}
	if got, err := strconv.ParseInt(rec["change"], 10, 64); err != nil || got != changelist {
		return domain.Changeset{}, nil, failure.Errorf(failure.SchemaInvalid, "p4 describe %d: answered for change %q", changelist, rec["change"])
	}
	cs := domain.Changeset{
		Changelist:  changelist,
		User:        rec["user"],
		Client:      rec["client"],
		Status:      rec["status"],
		Description: rec["desc"],
	}
	if cs.User == "" {
		return domain.Changeset{}, nil, failure.Errorf(failure.SchemaInvalid, "p4 describe %d: no user", changelist)
	}
	switch {
	case shelved && cs.Status == "submitted":
		return domain.Changeset{}, nil, failure.Errorf(failure.NotFound, "changelist %d is submitted and has no shelved files", changelist)
	case !shelved && cs.Status != "submitted":
		// A pending change's content lives in a workspace, not on the server.
		return domain.Changeset{}, nil, failure.Errorf(failure.NotFound, "changelist %d is %s, not submitted; only its shelved files can be reviewed", changelist, cs.Status)
	case shelved:
		cs.Status = "shelved"
	}

	files, sizes, err := describeFiles(rec)
	if err != nil {
		return domain.Changeset{}, nil, failure.Wrap(failure.SchemaInvalid, fmt.Errorf("p4 describe %d: %w", changelist, err))
	}
	cs.Files = files
	return cs, sizes, nil
}

// describeFiles reads the indexed file fields of a describe record.
// sizes holds each file's fileSize, -1 when not given.
func describeFiles(rec Record) ([]domain.FileChange, []int64, error) {
	var (
		files []domain.FileChange
		sizes []int64
	)
	for i := 0; ; i++ {
		idx := strconv.Itoa(i)
		path, ok := rec["depotFile"+idx]
		if !ok {
			break
		}
		fc := domain.FileChange{
			DepotPath: path,
			Action:    rec["action"+idx],
			Type:      rec["type"+idx],
			// The server's MD5: tells a rerun's unchanged file (shared/ledger).
			Digest: digestOf(rec["digest"+idx]),
		}
		if fc.Action == "" || fc.Type == "" {
			return nil, nil, fmt.Errorf("file %d: missing action or type", i)
		}
		size := int64(-1)
		if v, ok := rec["fileSize"+idx]; ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 0 {
				return nil, nil, fmt.Errorf("file %d: bad fileSize %q", i, v)
			}
			size = n
		}
		sizes = append(sizes, size)
		switch rev := rec["rev"+idx]; rev {
		case "", "none":
			// An opened add has no revision yet.
		default:
			n, err := strconv.Atoi(rev)
			if err != nil || n < 0 {
				return nil, nil, fmt.Errorf("file %d: bad revision %q", i, rev)
			}
			fc.Rev = n
		}
		files = append(files, fc)
	}
	// A gap in the indexes would leave a file unlisted and so unchecked.
	n := 0
	for k := range rec {
		if rest, ok := strings.CutPrefix(k, "depotFile"); ok && rest != "" {
			if _, err := strconv.Atoi(rest); err == nil {
				n++
			}
		}
	}
	if n != len(files) {
		return nil, nil, fmt.Errorf("file indexes are not contiguous (%d listed, %d read)", n, len(files))
	}
	return files, sizes, nil
}

// digestOf is d upper-cased when it is an MD5 in hex, "" otherwise.
func digestOf(d string) string {
	if len(d) != 32 || strings.Trim(d, "0123456789abcdefABCDEF") != "" {
		return ""
	}
	return strings.ToUpper(d)
}

// UserEmail is a Perforce user's e-mail from its spec (p4 user -o), "" for a
// user the server does not know (the change's owner, or a Swarm review's
// author, who does not own the archive change).
func (f *Fetcher) UserEmail(ctx context.Context, user string) (string, error) {
	if !validUser(user) {
		return "", failure.Errorf(failure.SchemaInvalid, "p4 describe: implausible user name (%d bytes)", len(user))
	}
	recs, err := f.p4.Run(ctx, "user", "-o", user)
	if err != nil {
		return "", err
	}
	// The spec's fields (User, Email, FullName, Update, Access; reference,
	// Changelists). That an unknown user's default spec has no Update is
	// *unverified*; such a spec is taken for an unknown user.
	r := first(recs, "User")
	if r == nil {
		return "", failure.Errorf(failure.SchemaInvalid, "p4 user -o: no user record in output")
	}
	if _, ok := r["Update"]; !ok {
		f.log.Warn("changelist author has no user spec", "event", "p4_user_unknown")
		return "", nil
	}
	return r["Email"], nil
}

// validUser rejects names that could be read as an option or a file spec;
// Perforce itself does not allow them in user names.
func validUser(u string) bool {
	if u == "" || len(u) > 256 || strings.HasPrefix(u, "-") || strings.Contains(u, "...") {
		return false
	}
	return !strings.ContainsFunc(u, func(r rune) bool { return r <= ' ' || r == 0x7f || strings.ContainsRune("@#%*/\\\"'", r) })
}

// isBinary: the file type stores binary content, not reviewable as text.
func isBinary(fileType string) bool {
	base, _, _ := strings.Cut(fileType, "+")
	switch base {
	case "binary", "ubinary", "xbinary", "cbinary", "apple", "resource", "uresource":
		return true
	}
	return false
}

func isDelete(action string) bool {
	return strings.HasSuffix(action, "delete") || action == "purge" || action == "archive"
}

func isAdd(action string) bool {
	switch action {
	case "add", "branch", "move/add", "import":
		return true
	}
	return false
}

// shelfNotVisible explains a shelved change the server does not show (err,
// its "unknown" answer, or nil for one listing no shelved file). On a commit
// or edge server that is first of all an unpromoted edge shelf:
// SHELF_NOT_PROMOTED rather than NOT_FOUND; on a standard server, err. Which
// answer a real commit server gives is unverified (reference, "Keywords,
// trust, tickets, edge servers"), so both are read.
func (f *Fetcher) shelfNotVisible(changelist int64, err error) error {
	if f.opt.ServerRole == RoleStandard {
		return err
	}
	f.log.Warn("shelved change not visible on this server: not promoted from an edge server?",
		"event", "p4_shelf_not_promoted", "changelist", changelist, "server_role", f.opt.ServerRole)
	return failure.Errorf(failure.ShelfNotPromoted,
		"changelist %d: no shelved files are visible on this %s server; a shelf made on an edge server is visible here only once promoted (p4 shelve -p, or dm.shelve.promote=1 on the edge); otherwise the change does not exist or all its files are hidden from the service user (docs/operating.md, SHELF_NOT_PROMOTED)", changelist, f.opt.ServerRole)
}
