package p4

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/criticizer/criticizer/shared/depot"
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/udiff"
)

// filePlan says how to get one file's diff: print newSpec (and oldSpec, when
// there is an old side) and diff them.
type filePlan struct {
	index            int // into Changeset.Files
	oldPath, oldSpec string
	path, newSpec    string
	size             int64  // describe's fileSize, -1 when unknown
	prevSpec         string // the path in an earlier shelf (Since), for the interdiff
	prevVersion      int
}

// specs lists the file specs the plan prints, the new side last.
func (p filePlan) specs() []string {
	return slices.DeleteFunc([]string{p.oldSpec, p.prevSpec, p.newSpec}, func(s string) bool { return s == "" })
}

// paths lists the depot path each of specs names.
func (p filePlan) paths() []string {
	out := make([]string, 0, 3)
	if p.oldSpec != "" {
		out = append(out, p.oldPath)
	}
	if p.prevSpec != "" {
		out = append(out, p.path)
	}
	return append(out, p.path)
}

// plan decides, per file, what to print. Files without a reviewable diff
// (deletes, binaries, huge files) get no plan and keep an empty Diff.
func (f *Fetcher) plan(ctx context.Context, changelist int64, shelved bool, files []domain.FileChange, sizes []int64, since Since) ([]filePlan, error) {
	moves, err := f.moveOrigins(ctx, shelved, files)
	if err != nil {
		return nil, err
	}
	var plans []filePlan
	for i, fc := range files {
		if isBinary(fc.Type) || isDelete(fc.Action) {
			continue
		}
		if sizes[i] > f.opt.MaxFileBytes {
			f.log.Info("file too large to diff; listed only", "event", "p4_file_not_diffed", "bytes", sizes[i])
			files[i].NotDiffed = domain.OverFileBytes // the review says why, not "no textual diff"
			continue
		}
		if !shelved && fc.Rev < 1 {
			return nil, failure.Errorf(failure.SchemaInvalid, "p4 describe %d: %s has no revision", changelist, fc.DepotPath)
		}
		p := filePlan{index: i, path: fc.DepotPath, size: sizes[i], newSpec: fmt.Sprintf("%s#%d", fc.DepotPath, fc.Rev)}
		oldRev := fc.Rev - 1
		if shelved {
			p.newSpec = fmt.Sprintf("%s@=%d", fc.DepotPath, changelist)
			oldRev = fc.Rev
		}
		if since.wants(changelist, shelved, fc) {
			p.prevSpec, p.prevVersion = fmt.Sprintf("%s@=%d", fc.DepotPath, since.Change), since.Version
		}
		switch {
		case fc.Action == "move/add":
			if o, ok := moves[fc.DepotPath]; ok {
				p.oldPath, p.oldSpec = o.path, fmt.Sprintf("%s#%d", o.path, o.rev)
			}
		case isAdd(fc.Action) || oldRev < 1:
		default:
			p.oldPath, p.oldSpec = fc.DepotPath, fmt.Sprintf("%s#%d", fc.DepotPath, oldRev)
		}
		plans = append(plans, p)
	}
	return plans, nil
}

type origin struct {
	path string
	rev  int
}

// moveOrigins finds where each move/add came from, so a rename is reviewed
// as a diff: submitted, filelog -m1 says ("moved from"); shelved, it pairs
// with the move/delete of the same base name (or the only one). An origin
// outside the allow-list is not read: the file is reviewed as added.
func (f *Fetcher) moveOrigins(ctx context.Context, shelved bool, files []domain.FileChange) (map[string]origin, error) {
	var adds, dels []domain.FileChange
	for _, fc := range files {
		switch fc.Action {
		case "move/add":
			adds = append(adds, fc)
		case "move/delete":
			dels = append(dels, fc)
		}
	}
	out := map[string]origin{}
	if shelved {
		for _, a := range adds {
			var match []domain.FileChange
			for _, d := range dels {
				if path.Base(d.DepotPath) == path.Base(a.DepotPath) {
					match = append(match, d)
				}
			}
			if len(match) == 0 && len(adds) == 1 && len(dels) == 1 {
				match = dels
			}
			if len(match) == 1 && match[0].Rev > 0 {
				out[a.DepotPath] = origin{match[0].DepotPath, match[0].Rev}
			}
		}
	} else {
		for start := 0; start < len(adds); start += f.opt.BatchFiles {
			batch := adds[start:min(start+f.opt.BatchFiles, len(adds))]
			args := []string{"-m1"}
			for _, a := range batch {
				if err := f.allow.Check(a.DepotPath); err != nil {
					return nil, err
				}
				args = append(args, fmt.Sprintf("%s#%d", a.DepotPath, a.Rev))
			}
			recs, err := f.p4.Run(ctx, "filelog", args...)
			if err != nil {
				return nil, err
			}
			for _, r := range recs {
				o, ok, err := movedFrom(r)
				if err != nil {
					return nil, err
				}
				if ok {
					out[r["depotFile"]] = o
				}
			}
		}
	}
	for p, o := range out {
		if err := f.allow.Check(o.path); err != nil {
			f.log.Warn("moved from outside the allow-list; reviewed as added", "event", "p4_move_origin_denied")
			delete(out, p)
		}
	}
	return out, nil
}

// movedFrom reads where a filelog -m1 record's revision was moved from: its
// integration records how0,<n>, file0,<n>, erev0,<n> (P4Python's
// revisions[0].integrations[n]). "moved from" is not always record 0: an
// integrated move/add lists "copy from" or "ignored" first (perforce/p4transfer
// test/TestP4Transfer.py, testMoveCopyCombo: index 1, testMoveCopyIgnoreCombo:
// index 2, against a real p4d; reference, Changelists).
func movedFrom(r Record) (origin, bool, error) {
	for n := 0; n < len(r); n++ {
		k := "0," + strconv.Itoa(n)
		how, ok := r["how"+k]
		if !ok {
			break
		}
		if how != "moved from" {
			continue
		}
		rev, err := strconv.Atoi(strings.TrimPrefix(r["erev"+k], "#"))
		if err != nil || rev < 1 || r["file"+k] == "" {
			return origin{}, false, failure.Errorf(failure.SchemaInvalid, "p4 filelog %s: bad moved-from record %d (file %q, erev %q)", r["depotFile"], n, r["file"+k], r["erev"+k])
		}
		return origin{r["file"+k], rev}, true, nil
	}
	return origin{}, false, nil
}

// fetchDiffs prints the planned batches on a bounded pool of p4 processes
// and hands each file with its Diff to sink; the first failure cancels the rest.
func (f *Fetcher) fetchDiffs(ctx context.Context, plans []filePlan, files []domain.FileChange, sink func(int, domain.FileChange) error) error {
	batches := f.batches(plans)
	if len(batches) == 0 {
		return nil
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(f.opt.Parallelism)
	for _, b := range batches {
		if gctx.Err() != nil {
			break
		}
		g.Go(func() error {
			diffs, err := f.printBatch(gctx, b)
			if err != nil {
				return err
			}
			for i, p := range b {
				fc := files[p.index] // a copy: files is only read here
				fc.Diff, fc.NotDiffed = diffs[i].diff, diffs[i].notDiffed
				if diffs[i].since > 0 {
					fc.Interdiff, fc.InterdiffFrom = diffs[i].interdiff, diffs[i].since
				}
				if err := sink(p.index, fc); err != nil {
					return err
				}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	if ctx.Err() != nil {
		return failure.Wrap(failure.NetworkTimeout, fmt.Errorf("p4 print: %w", ctx.Err()))
	}
	return nil
}

// unknownSize is what a file without a fileSize counts for in a batch.
const unknownSize = 64 << 10

// batches cuts the plans into print commands of BatchFiles specs, ~DefaultBatchBytes.
func (f *Fetcher) batches(plans []filePlan) [][]filePlan {
	var (
		out   [][]filePlan
		cur   []filePlan
		specs int
		bytes int64
	)
	for _, p := range plans {
		n := len(p.specs())
		size := p.size
		if size < 0 {
			size = unknownSize
		}
		size *= int64(n)
		if len(cur) > 0 && (specs+n > f.opt.BatchFiles || bytes+size > DefaultBatchBytes) {
			out = append(out, cur)
			cur, specs, bytes = nil, 0, 0
		}
		cur = append(cur, p)
		specs += n
		bytes += size
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// printed is one file's diffs: against its base, and against the earlier
// shelf (since > 0, the version that shelf holds) when one was asked for.
type printed struct {
	diff, interdiff string
	since           int
	notDiffed       string // domain.OverFileBytes: found too large only once printed
}

// printBatch prints the batch in one command (printSpecs re-checks the
// allow-list next to it: no code path reaches print unchecked). A batch
// naming an earlier shelf that fails for good (shelf deleted or hidden, an
// answer not understood) is printed again without it: the interdiff, a
// saving, never fails a fetch. A retryable failure is returned as it is.
func (f *Fetcher) printBatch(ctx context.Context, batch []filePlan) ([]printed, error) {
	out, err := f.printSpecs(ctx, batch)
	if err == nil || failure.Classify(err).Retryable() || ctx.Err() != nil || errors.Is(err, depot.ErrDenied) {
		return out, err
	}
	without := make([]filePlan, len(batch))
	dropped := 0
	for i, p := range batch {
		if p.prevSpec != "" {
			p.prevSpec, p.prevVersion = "", 0
			dropped++
		}
		without[i] = p
	}
	if dropped == 0 {
		return nil, err
	}
	f.log.Warn("printing with the earlier version's shelf failed; those files are reviewed whole",
		"event", "p4_interdiff_unavailable", "files", dropped, "error_class", failure.Classify(err))
	return f.printSpecs(ctx, without)
}

func (f *Fetcher) printSpecs(ctx context.Context, batch []filePlan) ([]printed, error) {
	var args, paths []string
	for _, p := range batch {
		for _, pth := range p.paths() {
			if err := f.allow.Check(pth); err != nil {
				return nil, err
			}
		}
		args = append(args, p.specs()...)
		paths = append(paths, p.paths()...)
	}
	// -k: keywords unexpanded, as describe shows a change, or every +k file's
	// $Id$ lines would differ (reference, "Keywords, trust, tickets, edge servers").
	recs, err := f.p4.Run(ctx, "print", append([]string{"-k"}, args...)...)
	if err != nil {
		return nil, err
	}
	contents, err := printedFiles(recs, args, paths)
	if err != nil {
		return nil, err
	}
	out := make([]printed, len(batch))
	k := 0
	for i, p := range batch {
		n := len(p.specs())
		got := contents[k : k+n]
		k += n
		newContent := got[n-1]
		if len(newContent) > int(f.opt.MaxFileBytes) {
			out[i].notDiffed = domain.OverFileBytes
			continue
		}
		if p.prevSpec != "" {
			prev := got[n-2]
			out[i].interdiff, out[i].since = editDiff(p.prevSpec, p.newSpec, prev, newContent), p.prevVersion
		}
		if p.oldSpec == "" {
			// An add is a diff from nothing.
			out[i].diff = editDiff("/dev/null", p.newSpec, "", newContent)
			continue
		}
		out[i].diff = editDiff(p.oldSpec, p.newSpec, got[0], newContent)
	}
	return out, nil
}

// printedFiles splits print output into one content per spec: a header record
// then {"data"} records (reference, "Output channel and record shapes"). The
// answer must name the files asked for, in order.
func printedFiles(recs []Record, specs, paths []string) ([]string, error) {
	var (
		out []string
		b   strings.Builder
		n   = -1
	)
	for _, r := range recs {
		if r.isData() {
			if n < 0 {
				return nil, failure.Errorf(failure.SchemaInvalid, "p4 print: content before any header")
			}
			b.WriteString(r["data"])
			continue
		}
		if n >= 0 {
			out = append(out, b.String())
			b.Reset()
		}
		n++
		if n >= len(paths) || r["depotFile"] != paths[n] {
			return nil, failure.Errorf(failure.SchemaInvalid, "p4 print %s: unexpected header", specs[min(n, len(specs)-1)])
		}
	}
	if n >= 0 {
		out = append(out, b.String())
	}
	if len(out) != len(specs) {
		return nil, failure.Errorf(failure.SchemaInvalid, "p4 print: %d files answered for %d asked", len(out), len(specs))
	}
	return out, nil
}

// editDiff renders old → new as a unified diff with headers naming both.
func editDiff(oldSpec, newSpec, old, new string) string {
	body := udiff.Unified(old, new, 3)
	if body == "" {
		return ""
	}
	return "--- " + oldSpec + "\n+++ " + newSpec + "\n" + body
}
