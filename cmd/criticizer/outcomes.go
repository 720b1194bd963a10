package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/criticizer/criticizer/shared/outcome"
	"github.com/criticizer/criticizer/shared/settings"
	"github.com/criticizer/criticizer/shared/store"
)

// outcomes report: what reviewers did with the findings posted on Swarm
// reviews (package outcome), as acceptance (accepted vs dismissed) by
// prompt version, model, category, severity, rule id and depot path;
// outcomes export: the records as JSON lines, for `make eval`'s replay.
func (a *app) outcomesCmd(ctx context.Context, api outcomeAPI, table string, args []string) error {
	const usage = "usage: criticizer outcomes report [--by prompt_version|model|category|severity|rule_id|path] [--path-depth N] | export | suppressions [-after N] | allow SCOPE CATEGORY KIND"
	switch {
	case len(args) == 1 && args[0] == "export":
		recs, err := outcome.All(ctx, api, table)
		if err != nil {
			return err
		}
		return exportOutcomes(a.out, recs)
	case len(args) >= 1 && args[0] == "suppressions":
		after, err := suppressionsAfter(args[1:])
		if err != nil {
			return err
		}
		ts, err := outcome.AllTallies(ctx, api, table)
		if err != nil {
			return err
		}
		return writeSuppressions(a.out, a.json, ts, after)
	case len(args) == 4 && args[0] == "allow":
		if err := outcome.NewStore(api, table).Allow(ctx, args[1], args[2], args[3]); err != nil {
			return err
		}
		_, err := fmt.Fprintf(a.out, "%s %s under %s: reported again from the next review\n", args[2], args[3], args[1])
		return err
	case len(args) == 0 || args[0] != "report":
		return errors.New(usage)
	}
	fs := flag.NewFlagSet("outcomes report", flag.ContinueOnError)
	by := fs.String("by", "", "one grouping (default: every one)")
	depth := fs.Int("path-depth", 2, "directory levels of a depot path that name its group")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	dims := outcome.Dimensions
	if *by != "" {
		if !slices.Contains(dims, outcome.Dimension(*by)) {
			return fmt.Errorf("--by %q: not one of %v", *by, dims)
		}
		dims = []outcome.Dimension{outcome.Dimension(*by)}
	}
	recs, err := outcome.All(ctx, api, table)
	if err != nil {
		return err
	}
	return writeAcceptance(a.out, a.json, recs, dims, *depth)
}

// exportOutcomes writes every record as one JSON object a line (identities
// and fates, never code or model text), for `make eval`'s replay of
// recorded outcomes (cmd/eval -outcomes).
func exportOutcomes(w io.Writer, recs []outcome.Record) error {
	enc := json.NewEncoder(w)
	for _, r := range recs {
		if err := enc.Encode(r); err != nil {
			return err
		}
	}
	return nil
}

// outcomeAPI is the DynamoDB client as the outcomes commands use it.
type outcomeAPI interface {
	store.API
	store.ScanAPI
}

// suppressionsAfter reads the threshold the listing judges "withheld" by:
// -after N, else DISMISS_THRESHOLD's declared default (shared/settings), the
// notify stage's N where the environment sets none.
func suppressionsAfter(args []string) (int, error) {
	decl, ok := settings.Variable("DISMISS_THRESHOLD")
	def, err := strconv.Atoi(decl.Default)
	if !ok || err != nil {
		return 0, fmt.Errorf("DISMISS_THRESHOLD has no declared whole-number default (%q)", decl.Default)
	}
	fs := flag.NewFlagSet("outcomes suppressions", flag.ContinueOnError)
	after := fs.Int("after", def, "dismissals, none accepted, after which a kind counts as withheld: the environment's DISMISS_THRESHOLD")
	if err := fs.Parse(args); err != nil {
		return 0, err
	}
	if err := decl.Check(strconv.Itoa(*after)); fs.NArg() > 0 || err != nil {
		return 0, fmt.Errorf("usage: criticizer outcomes suppressions [-after N] (N %s, default %d)", decl.Span(), def)
	}
	return *after, nil
}

// writeSuppressions lists every kind counted under a scope: those withheld
// now with N = after (the environment's threshold) first (WITHHELD yes), then
// the lifted and the ones still counting. A review rules file may set
// another N for its paths; the listing says so rather than read every file.
func writeSuppressions(w io.Writer, asJSON bool, ts []outcome.Suppression, after int) error {
	slices.SortFunc(ts, func(x, y outcome.Suppression) int {
		if x.ActiveAt(after) != y.ActiveAt(after) {
			if x.ActiveAt(after) {
				return -1
			}
			return 1
		}
		return strings.Compare(x.Scope+x.Category+x.Kind, y.Scope+y.Category+y.Kind)
	})
	if asJSON {
		type kind struct {
			outcome.Suppression
			Withheld bool `json:"withheld"`
		}
		out := struct {
			After int    `json:"after"`
			Kinds []kind `json:"kinds"`
		}{After: after, Kinds: []kind{}}
		for _, t := range ts {
			out.Kinds = append(out.Kinds, kind{t, t.ActiveAt(after)})
		}
		return json.NewEncoder(w).Encode(out)
	}
	fmt.Fprintf(w, "Withheld after %d dismissals with none accepted (-after; the notify stage uses DISMISS_THRESHOLD). A review rules file's dismissal_suppression.after may set another N for its paths (0: never withheld there), which this listing does not apply.\n\n", after)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "SCOPE\tCATEGORY\tKIND\tDISMISSED\tACCEPTED\tWITHHELD (after %d dismissals, none accepted)\n", after)
	for _, t := range ts {
		state := "no"
		switch {
		case t.Allowed:
			state = "no (allowed by an operator)"
		case t.ActiveAt(after):
			state = "yes"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%s\n", t.Scope, t.Category, t.Kind, t.Dismissed, t.Accepted, state)
	}
	return tw.Flush()
}

// writeAcceptance prints one table per grouping: counts, and the share
// accepted of the findings anyone accepted or dismissed ("-" while none).
func writeAcceptance(w io.Writer, asJSON bool, recs []outcome.Record, dims []outcome.Dimension, depth int) error {
	var rows []outcome.Row
	for _, d := range dims {
		rows = append(rows, outcome.Acceptance(recs, d, depth)...)
	}
	if asJSON {
		return json.NewEncoder(w).Encode(rows)
	}
	fmt.Fprintf(w, "%d findings posted on Swarm reviews or told by e-mail only. Accepted: addressed, verified, resolved by a later version or liked; dismissed: disliked, dismissed in a reply or archived; unknown: no comment to read (e-mail only or gone).\n", len(recs))
	for _, d := range dims {
		fmt.Fprintf(w, "\nBy %s\n", d)
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "KEY\tFINDINGS\tACCEPTED\tDISMISSED\tOPEN\tUNKNOWN\tACCEPTANCE")
		for _, r := range rows {
			if r.Dimension != d {
				continue
			}
			share := "-"
			if r.Share >= 0 {
				share = fmt.Sprintf("%.0f%% (%d of %d)", 100*r.Share, r.Accepted, r.Accepted+r.Dismissed)
			}
			fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%s\n", r.Key, r.Findings, r.Accepted, r.Dismissed, r.Open, r.Unknown, share)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return nil
}
