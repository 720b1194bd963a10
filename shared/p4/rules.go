package p4

import (
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/failure"
)

// RulesFiles reads name at the root of every allow-listed subtree holding
// one of files, as of before the change (submitted N: @N-1; shelved: the
// submitted head), so a change cannot rewrite its own rules. Each path
// passes the allow-list check before it is printed.
func (f *Fetcher) RulesFiles(ctx context.Context, changelist int64, shelved bool, files []string, name string) ([]domain.RulesFile, error) {
	rev := "#head"
	if !shelved {
		if changelist <= 1 {
			return nil, nil // nothing was submitted before change 1
		}
		rev = "@" + strconv.FormatInt(changelist-1, 10)
	}
	var roots []string
	for _, e := range f.allow.Entries() {
		root, ok := strings.CutSuffix(e, "...")
		if ok && !slices.Contains(roots, root) && slices.ContainsFunc(files, func(file string) bool { return strings.HasPrefix(file, root) }) {
			roots = append(roots, root)
		}
	}
	var out []domain.RulesFile
	for _, root := range roots {
		path := root + name
		if err := f.allow.Check(path); err != nil {
			return nil, err
		}
		spec := path + rev
		recs, err := f.p4.Run(ctx, "print", spec)
		switch failure.Classify(err) {
		case failure.NotFound:
			continue // no rules file at this root (then)
		case failure.PolicyRejected:
			out = append(out, domain.RulesFile{Root: root, Source: spec, Unreadable: "the service user may not read it (protected namespace)"})
			continue
		}
		if err != nil {
			return nil, err
		}
		contents, err := printedFiles(recs, []string{spec}, []string{path})
		if err != nil {
			return nil, err
		}
		out = append(out, domain.RulesFile{Root: root, Source: spec, Content: contents[0]})
	}
	return out, nil
}
