package p4

import (
	"context"
	"sync/atomic"

	"github.com/criticizer/criticizer/shared/failure"
)

// accessRank orders the levels "p4 protects -m" answers. An answer not
// listed ranks below list: the check fails closed on what it does not know.
var accessRank = map[string]int{"list": 1, "read": 2, "open": 3, "write": 4, "review": 4, "admin": 5, "owner": 5, "super": 6}

// CheckProtections makes the Fetcher verify, on its first fetch (once per
// cold start, not during init, and again after a failed check), that the
// service user's protections let the allow-list see every file:
//
//   - p4 protects -m //...  at least list: otherwise Perforce leaves files
//     the user cannot list out of describe without a word, and a changelist
//     touching a denied path could look allowed (or empty);
//   - p4 protects -m        at most read: a review account that can submit,
//     or administer protections, is more than the service needs.
//
// Either failing rejects the fetch as POLICY_REJECTED with a
// p4_protections_insufficient security event; nothing is described.
func (f *Fetcher) CheckProtections() *Fetcher {
	f.checkProtects = true
	return f
}

// protectionsVerified is set once the check passed in this process.
type protectionsVerified struct{ ok atomic.Bool }

func (f *Fetcher) verifyProtections(ctx context.Context) error {
	if !f.checkProtects || f.protects.ok.Load() {
		return nil
	}
	root, err := f.permMax(ctx, "//...")
	if err != nil {
		return err
	}
	top, err := f.permMax(ctx, "")
	if err != nil {
		return err
	}
	switch {
	case accessRank[root] < accessRank["list"]:
		f.log.Error("the p4 service user cannot list every depot path: the allow-list would not see hidden files; fetch refused",
			"event", "p4_protections_insufficient", "security_event", true, "path", "//...", "perm_max", root, "want", "list")
		return failure.Errorf(failure.PolicyRejected,
			"p4 service user has %q on //..., needs at least list there (grant list on //..., read only on the allow-listed paths; see README, Perforce service user)", root)
	case accessRank[top] > accessRank["read"] || accessRank[top] == 0:
		f.log.Error("the p4 service user has more than read access; fetch refused",
			"event", "p4_protections_excessive", "security_event", true, "perm_max", top, "want", "read")
		return failure.Errorf(failure.PolicyRejected,
			"p4 service user's highest access is %q; a review service user must have at most read (see README, Perforce service user)", top)
	}
	f.protects.ok.Store(true)
	f.log.Info("p4 service user protections verified", "root", root, "highest", top)
	return nil
}

// permMax runs "p4 protects -m [path]" and returns its permMax.
func (f *Fetcher) permMax(ctx context.Context, path string) (string, error) {
	args := []string{"-m"}
	if path != "" {
		args = append(args, path)
	}
	recs, err := f.p4.Run(ctx, "protects", args...)
	if err != nil {
		return "", err
	}
	for _, r := range recs {
		if v, ok := r["permMax"]; ok {
			return v, nil
		}
	}
	return "", failure.Errorf(failure.SchemaInvalid, "p4 protects -m %s: no permMax in output", path)
}
