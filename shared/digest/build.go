// Package digest owns the weekly digest (issue 32): one e-mail per owner of
// a depot path who opted in, about the week just ended — the reviews that
// touched their paths, the findings by severity and what reviewers did with
// them (acceptance, package outcome), what was withheld there as repeatedly
// dismissed, and the tokens and cost. Each job's week entry is recorded when
// its review is decided (weekly.Entries.Record); the sweeper's weekly run reads that one
// week's partition, builds each owner's digest and sends it once per owner
// and ISO week (Pass: its outbox row, outbox.DigestItem, through the one
// delivery protocol, outbox.Deliver).
package digest

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/criticizer/criticizer/shared/delivery"
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/outcome"
	"github.com/criticizer/criticizer/shared/weekly"
)

// Owner is one owner of depot paths who opted in to the digest.
type Owner struct {
	Address string   // canonical (delivery.Canonical)
	Paths   []string // depot path patterns, each "//…/..."
}

// Owners turns the environment's path owners (pattern → addresses) and its
// opt-in list into the owners to e-mail: only those opted in, each with
// every path they own. A pattern must be a depot path ending "/...".
func Owners(byPath map[string][]string, optIn []string) ([]Owner, error) {
	in := map[string]bool{}
	for _, a := range optIn {
		in[delivery.Canonical(a)] = true
	}
	paths := map[string][]string{}
	for p, addrs := range byPath {
		if !strings.HasPrefix(p, "//") || !strings.HasSuffix(p, "/...") || strings.Count(p, "...") != 1 {
			return nil, fmt.Errorf("digest: owned path %q: want a depot path pattern ending /... (//depot/engine/...)", p)
		}
		for _, a := range addrs {
			if c := delivery.Canonical(a); in[c] {
				paths[c] = append(paths[c], p)
			}
		}
	}
	var out []Owner
	for a, ps := range paths {
		slices.Sort(ps)
		out = append(out, Owner{Address: a, Paths: slices.Compact(ps)})
	}
	slices.SortFunc(out, func(x, y Owner) int { return strings.Compare(x.Address, y.Address) })
	return out, nil
}

// under reports whether the depot path p (a file or a directory) is under
// one of the patterns.
func under(p string, patterns []string) bool {
	for _, pat := range patterns {
		root := strings.TrimSuffix(pat, "...")
		if strings.HasPrefix(p+"/", root) {
			return true
		}
	}
	return false
}

// Digest is one owner's week.
type Digest struct {
	Owner   string
	Week    weekly.Week
	Paths   []string
	Reviews int // jobs whose changes touched the paths
	// Severity is the findings on the paths by severity (most severe
	// first) with what reviewers did with them; Total sums them.
	Severity []outcome.Row
	Total    outcome.Row
	// Withheld counts findings withheld as repeatedly dismissed in those
	// jobs; Suppressions are the kinds withheld under the paths now, and
	// Awaiting those waiting for an operator's confirmation, both by the
	// environment's one policy (Dismissals) the notify stage withholds by.
	Withheld     int
	Suppressions []outcome.Suppression
	Awaiting     []outcome.Suppression
	Dismissals   outcome.Policy
	// Unlisted counts findings of very large reviews their entries could
	// not itemise (Entry.Unlisted): in no severity row.
	Unlisted     int
	InputTokens  int64
	OutputTokens int64
	CostUSD      float64
}

// Empty reports whether nothing happened on the owner's paths.
func (d Digest) Empty() bool { return d.Reviews == 0 && len(d.Suppressions) == 0 }

// Fates reads what the acceptance needs: a review's recorded outcomes
// and the kind tallies under a scope (outcome.Store).
type Fates interface {
	Review(ctx context.Context, review int64) ([]outcome.Record, error)
	Tallies(ctx context.Context, scope string) ([]outcome.Suppression, error)
}

// Build makes owner's digest of week from its entries. Each Swarm review's
// outcomes and each scope's tallies are read once per call (once per pass:
// Pass.Run hands every owner's Build one cache); a finding told by e-mail
// only, or never posted, counts as unknown.
func Build(ctx context.Context, fates Fates, pol outcome.Policy, owner Owner, week weekly.Week, entries []weekly.Entry) (Digest, error) {
	c := cached(fates)
	d := Digest{Owner: owner.Address, Week: week, Paths: owner.Paths, Dismissals: pol}
	var recs []outcome.Record
	scopes := map[string]bool{}
	for _, p := range owner.Paths {
		// The scope a file directly under p counts in (the policy's depth).
		scopes[pol.Scope(strings.TrimSuffix(p, "...")+"f")] = true
	}
	for _, e := range entries {
		if !slices.ContainsFunc(e.Dirs, func(dir string) bool { return under(dir, owner.Paths) }) {
			continue
		}
		d.Reviews++
		d.Withheld += e.Withheld
		d.Unlisted += e.Unlisted
		d.InputTokens += e.InputTokens
		d.OutputTokens += e.OutputTokens
		d.CostUSD += e.CostUSD
		fate, err := c.fates(ctx, e.Review)
		if err != nil {
			return Digest{}, err
		}
		for _, f := range e.Findings {
			if !under(f.File, owner.Paths) {
				continue
			}
			scopes[pol.Scope(f.File)] = true
			r := outcome.Record{Fingerprint: f.Fingerprint, File: f.File, Severity: f.Severity, Fate: outcome.Unknown}
			if got, ok := fate[f.Fingerprint]; ok {
				r.Fate = got
			}
			recs = append(recs, r)
		}
	}
	d.Severity = outcome.Acceptance(recs, outcome.BySeverity, 0)
	slices.SortStableFunc(d.Severity, func(a, b outcome.Row) int { return domain.SeverityRank(a.Key) - domain.SeverityRank(b.Key) })
	d.Total = total(d.Severity)
	for _, sc := range slices.Sorted(maps.Keys(scopes)) {
		ts, err := c.Tallies(ctx, sc)
		if err != nil {
			return Digest{}, err
		}
		for _, t := range ts {
			switch {
			case pol.Active(t):
				d.Suppressions = append(d.Suppressions, t)
			case pol.Awaiting(t):
				d.Awaiting = append(d.Awaiting, t)
			}
		}
	}
	return d, nil
}

// fateCache is Fates read once each: a review's fates by fingerprint, a
// scope's tallies.
type fateCache struct {
	src     Fates
	reviews map[int64]map[string]outcome.Fate
	scopes  map[string][]outcome.Suppression
}

// cached is f read through a fateCache; f itself when it is one.
func cached(f Fates) *fateCache {
	if c, ok := f.(*fateCache); ok {
		return c
	}
	return &fateCache{src: f, reviews: map[int64]map[string]outcome.Fate{}, scopes: map[string][]outcome.Suppression{}}
}

// Review reads review's outcomes from the source (Fates; Build reads
// them through fates).
func (c *fateCache) Review(ctx context.Context, review int64) ([]outcome.Record, error) {
	return c.src.Review(ctx, review)
}

// Tallies is scope's tallies, read once (Fates).
func (c *fateCache) Tallies(ctx context.Context, scope string) ([]outcome.Suppression, error) {
	if ts, ok := c.scopes[scope]; ok {
		return ts, nil
	}
	ts, err := c.src.Tallies(ctx, scope)
	if err == nil {
		c.scopes[scope] = ts
	}
	return ts, err
}

// fates is review's fates by fingerprint, read once (none for an
// e-mail-only job: review 0).
func (c *fateCache) fates(ctx context.Context, review int64) (map[string]outcome.Fate, error) {
	if review <= 0 {
		return nil, nil
	}
	if m, ok := c.reviews[review]; ok {
		return m, nil
	}
	recs, err := c.src.Review(ctx, review)
	if err != nil {
		return nil, err
	}
	m := map[string]outcome.Fate{}
	for _, r := range recs {
		m[r.Fingerprint] = r.Fate
	}
	c.reviews[review] = m
	return m, nil
}

func total(rows []outcome.Row) outcome.Row {
	t := outcome.Row{Dimension: outcome.BySeverity, Key: "all", Share: -1}
	for _, r := range rows {
		t.Findings += r.Findings
		t.Accepted += r.Accepted
		t.Dismissed += r.Dismissed
		t.Open += r.Open
		t.Unknown += r.Unknown
	}
	if n := t.Accepted + t.Dismissed; n > 0 {
		t.Share = float64(t.Accepted) / float64(n)
	}
	return t
}
