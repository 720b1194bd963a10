package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"text/tabwriter"

	"github.com/criticizer/criticizer/shared/outcome"
)

// outcomes report: what reviewers did with the findings posted on Swarm
// reviews (package outcome), as acceptance (accepted vs dismissed) by
// prompt version, model, category, severity, rule id and depot path.
func (a *app) outcomesCmd(ctx context.Context, api outcome.Scanner, table string, args []string) error {
	if len(args) == 0 || args[0] != "report" {
		return errors.New("usage: criticizer outcomes report [--by prompt_version|model|category|severity|rule_id|path] [--path-depth N]")
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
	fmt.Fprintf(w, "%d findings posted on Swarm reviews. Accepted: addressed, verified, resolved by a later version or liked; dismissed: disliked, dismissed in a reply or archived; unknown: no comment to read (e-mail only or gone).\n", len(recs))
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
