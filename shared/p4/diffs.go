package p4

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"
	"sync"

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
	size             int64 // describe's fileSize, -1 when unknown
	// prevSpec, when set, is the same path in an earlier shelf (Since):
	// printed too, for the interdiff to newSpec.
	prevSpec    string
	prevVersion int
}

// specs lists the file specs the plan prints, old side first, the new
// side last.
func (p filePlan) specs() []string {
	out := make([]string, 0, 3)
	for _, s := range []string{p.oldSpec, p.prevSpec, p.newSpec} {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// paths lists the depot path each of specs names, in the same order.
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

// moveOrigins finds where each move/add came from, so that a rename is
// reviewed as the diff from the old path#rev, not as a new file. For a
// submitted change, filelog -m1 says so exactly ("moved from"); a shelved
// move/add is paired with the change's move/delete of the same base name
// (or the only one), whose rev is its base revision. An origin outside the
// allow-list is not read: the file is then reviewed as added.
func (f *Fetcher) moveOrigins(ctx context.Context, shelved bool, files []domain.FileChange) (map[string]origin, error) {
	var adds []domain.FileChange
	var dels []domain.FileChange
	for _, fc := range files {
		switch fc.Action {
		case "move/add":
			adds = append(adds, fc)
		case "move/delete":
			dels = append(dels, fc)
		}
	}
	out := map[string]origin{}
	if len(adds) == 0 {
		return out, nil
	}
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

// movedFrom reads where a filelog -m1 record's revision was moved from.
// The revision's integration records are how0,<n>, file0,<n>, srev0,<n>,
// erev0,<n> (the tagged form of P4Python's revisions[0].integrations[n]);
// "moved from" is not always record 0: a move/add that was also
// integrated lists "copy from" or "ignored" first (perforce/p4transfer
// test/TestP4Transfer.py, testMoveCopyCombo: index 1,
// testMoveCopyIgnoreCombo: index 2, against a real p4d; reference,
// Changelists). So every record of the revision is read.
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

// fetchDiffs prints the planned files in batches on a bounded pool of p4
// processes and hands each file with its Diff to sink. The first failure,
// the p4 server's or the sink's, cancels the rest.
func (f *Fetcher) fetchDiffs(ctx context.Context, plans []filePlan, files []domain.FileChange, sink func(int, domain.FileChange) error) error {
	batches := f.batches(plans)
	if len(batches) == 0 {
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	work := make(chan []filePlan)
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
	)
	for range min(f.opt.Parallelism, len(batches)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range work {
				diffs, err := f.printBatch(ctx, b)
				for i, p := range b {
					if err != nil {
						break
					}
					fc := files[p.index] // a copy: files is only read here
					fc.Diff, fc.NotDiffed = diffs[i].diff, diffs[i].notDiffed
					if diffs[i].since > 0 {
						fc.Interdiff, fc.InterdiffFrom = diffs[i].interdiff, diffs[i].since
					}
					err = sink(p.index, fc)
				}
				if err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
						cancel()
					}
					mu.Unlock()
				}
			}
		}()
	}
feed:
	for _, b := range batches {
		select {
		case work <- b:
		case <-ctx.Done():
			break feed
		}
	}
	close(work)
	wg.Wait()
	if firstErr == nil && ctx.Err() != nil {
		firstErr = failure.Wrap(failure.NetworkTimeout, fmt.Errorf("p4 print: %w", ctx.Err()))
	}
	return firstErr
}

// unknownSize is what a file without a fileSize counts for in a batch.
const unknownSize = 64 << 10

// batches cuts the plans into print commands of at most BatchFiles specs and
// about BatchBytes of content.
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
		if len(cur) > 0 && (specs+n > f.opt.BatchFiles || bytes+size > f.opt.BatchBytes) {
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

// printBatch prints every spec of the batch in one command and returns each
// plan's diffs. The allow-list is checked again next to the command, for
// every path it names (defense in depth: no code path reaches print
// unchecked). When a batch naming an earlier shelf for interdiffs fails
// for good (the shelf deleted since, not visible, an answer not understood),
// it is printed again without it: those files are then reviewed whole, and
// the interdiff, a saving, never fails a fetch that works without it. A
// failure that may pass is returned as it is, for the stage to retry.
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
	var args []string
	var paths []string
	for _, p := range batch {
		for _, pth := range p.paths() {
			if err := f.allow.Check(pth); err != nil {
				return nil, err
			}
		}
		args = append(args, p.specs()...)
		paths = append(paths, p.paths()...)
	}
	// -k: keywords unexpanded, as describe shows a change ("keyword
	// differences tend to obscure real differences"), or every +k file
	// would show its $Id$/$Change$/$DateTime$ lines changed (reference,
	// "Keywords, trust, tickets, edge servers").
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
			// Only now known to be huge (describe gave no size): listed only.
			out[i].notDiffed = domain.OverFileBytes
			continue
		}
		if p.prevSpec != "" {
			prev := got[n-2]
			out[i].interdiff, out[i].since = editDiff(p.prevSpec, p.newSpec, prev, newContent), p.prevVersion
		}
		if p.oldSpec == "" {
			out[i].diff = addedDiff(p.newSpec, newContent)
			continue
		}
		out[i].diff = editDiff(p.oldSpec, p.newSpec, got[0], newContent)
	}
	return out, nil
}

// printedFiles splits print output into one content per spec: each file is a
// header record followed by {"data"} records (reference, "Output channel and
// record shapes": print's tagged header {depotFile, rev, change, action,
// type, …}, then data records, the last empty). The answer must name the files
// asked for, in order; anything else is not trusted.
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

// editDiff renders the change from old to new content as a unified diff
// with file headers naming both revisions.
func editDiff(oldSpec, newSpec, old, new string) string {
	body := udiff.Unified(old, new, 3)
	if body == "" {
		return ""
	}
	return "--- " + oldSpec + "\n+++ " + newSpec + "\n" + body
}
