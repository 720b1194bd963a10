package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/criticizer/criticizer/shared/config"
	"github.com/criticizer/criticizer/shared/outcome"
	"github.com/criticizer/criticizer/shared/settings"
	"github.com/criticizer/criticizer/shared/store"
)

// outcomes report: what reviewers did with the findings posted on Swarm
// reviews (package outcome), as acceptance (accepted vs dismissed) by
// prompt version, model, category, severity, rule id and depot path;
// outcomes export: the records as JSON lines, for `make eval`'s replay.
func (a *app) outcomesCmd(ctx context.Context, api outcomeAPI, table string, args []string) error {
	const usage = "usage: criticizer outcomes report [--by prompt_version|model|category|severity|rule_id|path] [--path-depth N] | export | suppressions [--env ENV] [--cdk cdk.json] | allow SCOPE CATEGORY KIND | confirm SCOPE CATEGORY KIND"
	switch {
	case len(args) == 1 && args[0] == "export":
		recs, err := outcome.All(ctx, api, table)
		if err != nil {
			return err
		}
		return exportOutcomes(a.out, recs)
	case len(args) >= 1 && args[0] == "suppressions":
		pol, err := policyOf(args[1:])
		if err != nil {
			return err
		}
		ts, err := outcome.AllTallies(ctx, api, table)
		if err != nil {
			return err
		}
		return writeSuppressions(a.out, a.json, ts, pol)
	case len(args) == 4 && args[0] == "allow":
		if err := outcome.NewStore(api, table).Allow(ctx, args[1], args[2], args[3]); err != nil {
			return err
		}
		_, err := fmt.Fprintf(a.out, "%s %s under %s: reported again from the next review\n", args[2], args[3], args[1])
		return err
	case len(args) == 4 && args[0] == "confirm":
		if err := outcome.NewStore(api, table).Confirm(ctx, args[1], args[2], args[3]); err != nil {
			return err
		}
		_, err := fmt.Fprintf(a.out, "%s %s under %s: confirmed; withheld from the next review once its dismissals suffice (lift: criticizer outcomes allow %s %s %s)\n", args[2], args[3], args[1], args[1], args[2], args[3])
		return err
	case len(args) == 0 || args[0] != "report":
		return errors.New(usage)
	}
	fs := flag.NewFlagSet("outcomes report", flag.ContinueOnError)
	by := fs.String("by", "", "one grouping (default: every one)")
	depth := fs.Int("path-depth", outcome.DefaultPolicy().PathDepth(), "directory levels of a depot path that name its group (default: the noise filter's scope)")
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

// policyOf is the environment's noise filter, read by the one loader
// (outcome.PolicyFromEnv) from the environment's settings in cdk.json
// (--env, --cdk) as the functions read them from their variables; with no
// --env, the declared defaults.
func policyOf(args []string) (outcome.Policy, error) {
	fs := flag.NewFlagSet("outcomes suppressions", flag.ContinueOnError)
	env := fs.String("env", "", "the environment whose settings (cdk.json) decide what is withheld")
	cdkPath := fs.String("cdk", "cdk.json", "the CDK context file holding the environment's settings")
	if err := fs.Parse(args); err != nil || fs.NArg() > 0 {
		return outcome.Policy{}, errors.New("usage: criticizer outcomes suppressions [--env ENV] [--cdk cdk.json]")
	}
	if *env == "" {
		return outcome.DefaultPolicy(), nil
	}
	raw, err := os.ReadFile(*cdkPath)
	if err != nil {
		return outcome.Policy{}, err
	}
	vars, err := envVars(raw, *env)
	if err != nil {
		return outcome.Policy{}, err
	}
	r := config.NewReaderFrom(vars)
	pol := outcome.PolicyFromEnv(r)
	return pol, r.Err()
}

// envVars maps an environment's cdk.json keys to the variables the
// functions read them as (shared/settings: one key, one variable).
func envVars(raw []byte, env string) (map[string]string, error) {
	var e map[string]any
	if err := cdkEnvironment(raw, env, &e); err != nil {
		return nil, err
	}
	vars := map[string]string{}
	for _, d := range settings.Declared {
		if len(d.Keys) == 1 && len(d.Vars) == 1 && e[d.Keys[0]] != nil {
			vars[d.Vars[0]] = settings.EnvText(e[d.Keys[0]])
		}
	}
	return vars, nil
}

// writeSuppressions lists every kind counted under a scope by the
// environment's one policy: those withheld now first, then those awaiting
// an operator's confirmation, the lifted and the ones still counting;
// each with who dismissed it with standing (logins, reviews, dates) and
// how to lift it. A review rules file may set another N for its paths;
// the listing says so rather than read every file.
func writeSuppressions(w io.Writer, asJSON bool, ts []outcome.Suppression, pol outcome.Policy) error {
	state := func(t outcome.Suppression) string {
		switch {
		case t.Allowed:
			return "no (allowed by an operator)"
		case pol.Active(t):
			return "yes"
		case pol.Awaiting(t):
			return "awaiting confirmation (criticizer outcomes confirm)"
		}
		return "no"
	}
	slices.SortFunc(ts, func(x, y outcome.Suppression) int {
		if c := strings.Compare(rankState(state(x)), rankState(state(y))); c != 0 {
			return c
		}
		return strings.Compare(x.Scope+x.Category+x.Kind, y.Scope+y.Category+y.Kind)
	})
	if asJSON {
		type kind struct {
			outcome.Suppression
			Withheld bool   `json:"withheld"`
			State    string `json:"state"`
			Lift     string `json:"lift"`
		}
		out := struct {
			Policy string `json:"policy"`
			After  int    `json:"after"`
			Kinds  []kind `json:"kinds"`
		}{Policy: pol.Describe(), After: pol.Threshold, Kinds: []kind{}}
		for _, t := range ts {
			out.Kinds = append(out.Kinds, kind{t, pol.Active(t), state(t), lift(t)})
		}
		return json.NewEncoder(w).Encode(out)
	}
	fmt.Fprintf(w, "Policy: %s. A review rules file's dismissal_suppression.after may set another N for its paths (0: never withheld there), which this listing does not apply.\n\n", pol.Describe())
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SCOPE\tCATEGORY\tKIND\tDISMISSED\tACCEPTED\tWITHHELD\tDISMISSED BY (with a say)\tLIFT")
	for _, t := range ts {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%s\t%s\t%s\n", t.Scope, t.Category, t.Kind, t.Dismissed, t.Accepted, state(t), who(t), lift(t))
	}
	return tw.Flush()
}

func rankState(s string) string {
	switch {
	case s == "yes":
		return "0"
	case strings.HasPrefix(s, "awaiting"):
		return "1"
	}
	return "2" + s
}

// who is each dismissal with standing: logins, review and date.
func who(t outcome.Suppression) string {
	if len(t.Dismissals) == 0 {
		return "-"
	}
	var parts []string
	for _, d := range t.Dismissals {
		parts = append(parts, fmt.Sprintf("%s on review %d at %s", strings.Join(d.By, "+"), d.Review, d.At))
	}
	return strings.Join(parts, "; ")
}

func lift(t outcome.Suppression) string {
	return fmt.Sprintf("criticizer outcomes allow %s %s %s", t.Scope, t.Category, t.Kind)
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
