package p4

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/criticizer/criticizer/shared/depot"
	"github.com/criticizer/criticizer/shared/failure"
)

// accessRank orders protection levels. A level not listed ranks below list:
// the check fails closed on what it does not know.
var accessRank = map[string]int{"list": 1, "read": 2, "open": 3, "write": 4, "review": 4, "admin": 5, "owner": 5, "super": 6}

// CheckProtections makes the Fetcher prove, before every fetch, that the
// service user sees every file of a change inside the allow-list (reference,
// "Protections: what p4 protects can and cannot prove"): describe silently
// omits files a user may not list, and "p4 protects -m" ignores the path and
// every exclusion. The proof is the user's own lines ("p4 protects"):
//
//   - every allow-listed path lies under a line granting at least read from
//     any host;
//   - no exclusionary line after it may reach into an allow-listed path;
//   - nothing grants more than read (a review account needs no more);
//   - "p4 protects -M <entry>" agrees that each entry is readable: a server
//     with dm.protects.hide=1 hides exclusions from the listing but not from
//     its own evaluation, so an exclusion of a whole entry still shows here.
//
// The table is read, and judged again when it changed, and -M asked per
// entry, on every fetch (1 + entries commands): a changed table takes effect
// at the next fetch. A refusal is SECURITY_FAILURE with a
// p4_protections_refused security event; nothing is described.
func (f *Fetcher) CheckProtections() *Fetcher {
	f.checkProtects = true
	return f
}

// protectionLine is one line of "p4 protects" as it applies to the caller.
type protectionLine struct {
	number     int    // the line's place in the whole table (tagged "line")
	perm, host string // a level ("read") or a right ("=read"); a host pattern
	name       string // the user or group the line names
	group      bool   // the line names a group the caller belongs to
	path       string
	exclude    bool
}

func (l protectionLine) String() string {
	ex, kind := "", "user"
	if l.exclude {
		ex = "-"
	}
	if l.group {
		kind = "group"
	}
	return fmt.Sprintf("line %d: %s %s %s %s %s%s", l.number, l.perm, kind, l.name, l.host, ex, l.path)
}

// readProtections reads "p4 protects" tagged: per line {perm, host, user,
// line, depotFile}, "isgroup" on a group's line, "unmap" on an exclusion
// (whose depotFile has no "-"). Sources: github.com/brettbates/p4access
// prots/prots_test.go (records captured from a real server) and
// prots/prots.go; a P4Python administration tool printing "-" + depotFile
// exactly when "unmap" is present (reference, "Tagged output of p4
// protects"). A leading "-" is read as an exclusion too (no source shows
// it; a grant misread would open the proof). Any other record is
// SCHEMA_INVALID: the proof fails closed.
func readProtections(recs []Record) ([]protectionLine, error) {
	out := make([]protectionLine, 0, len(recs))
	numbered := true
	for i, r := range recs {
		path, okPath := r["depotFile"]
		perm, okPerm := r["perm"]
		if !okPath || !okPerm || path == "" || perm == "" {
			return nil, failure.Errorf(failure.SchemaInvalid, "p4 protects: record %d has no perm or depotFile (fields %s)", i,
				strings.Join(slices.Sorted(maps.Keys(r)), ",")) // names, never values
		}
		l := protectionLine{perm: perm, host: r["host"], name: r["user"]}
		_, l.group = r["isgroup"]
		_, unmap := r["unmap"]
		path, dash := strings.CutPrefix(path, "-")
		l.path, l.exclude = path, unmap || dash
		if v, ok := r["line"]; ok {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return nil, failure.Errorf(failure.SchemaInvalid, "p4 protects: record %d: line %q is not a line number", i, v)
			}
			l.number = n
		} else {
			// Unverified: every source shows "line"; without it the
			// table is taken in the order the server printed it.
			numbered = false
			l.number = i + 1
		}
		out = append(out, l)
	}
	if numbered {
		slices.SortStableFunc(out, func(a, b protectionLine) int { return a.number - b.number })
	}
	return out, nil
}

// anyHost: only "*" applies from every host; a Lambda's address is not
// fixed, so a host-restricted grant proves nothing (a host-restricted
// exclusion still excludes).
func (l protectionLine) anyHost() bool { return l.host == "*" }

// grantsRead: an include line granting at least the read level. A right
// ("=read") is one right, not a level (command reference, p4 protect);
// whether it alone lets a user list files is unverified.
func (l protectionLine) grantsRead() bool {
	return !l.exclude && !strings.HasPrefix(l.perm, "=") && accessRank[l.perm] >= accessRank["read"]
}

// refusal says why a table does not prove whole-changelist visibility.
type refusal struct {
	reason string // stable: no_read, exclusion_under_allowlist, excessive_access, hidden_exclusions
	entry  string // the allow-list entry concerned, if any
	line   string // the protections line concerned, if any
	detail string
}

// judgeProtections says why lines fail to prove every file under entries
// readable (nil: they prove it); later lines override earlier ones.
func judgeProtections(lines []protectionLine, entries []string) *refusal {
	for _, l := range lines {
		if !l.exclude && accessRank[strings.TrimPrefix(l.perm, "=")] > accessRank["read"] {
			return &refusal{reason: "excessive_access", line: l.String(),
				detail: fmt.Sprintf("the line %q grants more than read; a review service user needs read only", l)}
		}
	}
	for _, e := range entries {
		last := -1
		var hostOnly *protectionLine
		for i, l := range lines {
			if !l.grantsRead() || !depot.Covers(l.path, e) {
				continue
			}
			if l.anyHost() {
				last = i
			} else {
				hostOnly = &lines[i]
			}
		}
		if last < 0 && hostOnly != nil {
			return &refusal{reason: "no_read", entry: e, line: hostOnly.String(),
				detail: fmt.Sprintf("read on %s is granted only from host %q (%s): a Lambda's address is not fixed, so only a line with host * proves access", e, hostOnly.host, hostOnly)}
		}
		if last < 0 {
			return &refusal{reason: "no_read", entry: e,
				detail: fmt.Sprintf("no protections line grants read on all of %s from every host (a =read right is not the read level)", e)}
		}
		for _, l := range lines[last+1:] {
			if l.exclude && depot.MayOverlap(l.path, e) {
				return &refusal{reason: "exclusion_under_allowlist", entry: e, line: l.String(),
					detail: fmt.Sprintf("the exclusionary line %q reaches into the allow-listed %s: its files would be left out of a change without a word", l, e)}
			}
		}
	}
	return nil
}

func tableDigest(lines []protectionLine) string {
	h := sha256.New()
	for _, l := range lines {
		fmt.Fprintln(h, l.String())
	}
	return hex.EncodeToString(h.Sum(nil))
}

// verifyProtections makes the proof (CheckProtections) and returns the
// lines it read; nil, nil when the Fetcher is not asked to.
func (f *Fetcher) verifyProtections(ctx context.Context) ([]protectionLine, error) {
	if !f.checkProtects {
		return nil, nil
	}
	recs, err := f.p4.Run(ctx, "protects")
	if err != nil {
		return nil, err
	}
	lines, err := readProtections(recs)
	if err != nil {
		return nil, err
	}
	digest := tableDigest(lines)
	entries := f.allow.Entries()
	if f.protects.Load() != digest {
		if r := judgeProtections(lines, entries); r != nil {
			return nil, f.refuse(r)
		}
	}
	// Every time: a hidden exclusion leaves the listing's digest unchanged.
	for _, e := range entries {
		perm, err := f.permMax(ctx, e)
		if err != nil {
			return nil, err
		}
		if accessRank[perm] < accessRank["read"] {
			return nil, f.refuse(&refusal{reason: "hidden_exclusions", entry: e,
				detail: fmt.Sprintf("the listed lines grant read on %s but the server answers %q for it: exclusionary lines are hidden (dm.protects.hide)", e, perm)})
		}
	}
	if f.protects.Swap(digest) != digest {
		f.log.Info("p4 service user protections verified", "event", "p4_protections_verified", "lines", len(lines), "digest", digest)
	}
	return lines, nil
}

func (f *Fetcher) refuse(r *refusal) error {
	f.log.Error("the p4 service user's protections cannot prove that changes are seen whole; fetch refused",
		"event", "p4_protections_refused", "security_event", true, "reason", r.reason, "allowlist_entry", r.entry, "protections_line", r.line)
	return failure.Errorf(failure.SecurityFailure,
		"p4 protections refused (%s): %s; the service user needs read on every allow-listed path and no exclusion beneath them (docs/perforce-and-swarm.md, The service user)", r.reason, r.detail)
}

// permMax is "p4 protects -M path"'s one field (command reference for p4
// protects -m/-M; the .NET API's GetMaxProtectionAccessCmdFlags; reference,
// Protections).
func (f *Fetcher) permMax(ctx context.Context, path string) (string, error) {
	recs, err := f.p4.Run(ctx, "protects", "-M", path)
	if err != nil {
		return "", err
	}
	if r := first(recs, "permMax"); r != nil {
		return r["permMax"], nil
	}
	return "", failure.Errorf(failure.SchemaInvalid, "p4 protects -M %s: no permMax in output", path)
}
