package outcome

import (
	"context"
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/criticizer/criticizer/shared/store"
)

// Dimension is what the acceptance report groups findings by.
type Dimension string

const (
	ByPromptVersion Dimension = "prompt_version"
	ByModel         Dimension = "model"
	ByCategory      Dimension = "category"
	BySeverity      Dimension = "severity"
	ByRule          Dimension = "rule_id"
	ByPath          Dimension = "path"
)

// Dimensions are every grouping, in the report's order.
var Dimensions = []Dimension{ByPromptVersion, ByModel, ByCategory, BySeverity, ByRule, ByPath}

// Row is one group of the report. Share is Accepted / (Accepted + Dismissed), -1
// while both are 0: open, withheld and unknown findings count in neither.
type Row struct {
	Dimension Dimension `json:"dimension"`
	Key       string    `json:"key"`
	Findings  int       `json:"findings"`
	Accepted  int       `json:"accepted"`
	Dismissed int       `json:"dismissed"`
	Open      int       `json:"open"`
	Withheld  int       `json:"withheld,omitempty"`
	Unknown   int       `json:"unknown"`
	Share     float64   `json:"share"`
}

// Acceptance groups records by d; pathDepth is the directory depth of ByPath
// groups.
func Acceptance(recs []Record, d Dimension, pathDepth int) []Row {
	by := map[string]*Row{}
	for _, r := range recs {
		k := key(r, d, pathDepth)
		row := by[k]
		if row == nil {
			row = &Row{Dimension: d, Key: k}
			by[k] = row
		}
		row.Findings++
		switch {
		case r.Fate.Accepted():
			row.Accepted++
		case r.Fate.Dismissive():
			row.Dismissed++
		case r.Fate == Open:
			row.Open++
		case r.Fate == Withheld:
			row.Withheld++ // not posted again: neither accepted nor dismissed
		default:
			row.Unknown++
		}
	}
	out := make([]Row, 0, len(by))
	for _, r := range by {
		r.Share = -1
		if n := r.Accepted + r.Dismissed; n > 0 {
			r.Share = float64(r.Accepted) / float64(n)
		}
		out = append(out, *r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

func key(r Record, d Dimension, depth int) string {
	var k string
	switch d {
	case ByPromptVersion:
		k = r.PromptVersion
	case ByModel:
		k = r.Model
	case ByCategory:
		k = r.Category
	case BySeverity:
		k = r.Severity
	case ByRule:
		k = r.RuleID
	case ByPath:
		k = PathGroup(r.File, depth)
	}
	if k == "" {
		return "(none)"
	}
	return k
}

// PathGroup is the first depth directories of a depot path, as a pattern:
// PathGroup("//depot/engine/render/a.cpp", 2) is "//depot/engine/...".
// A file with fewer directories is grouped by its own directory.
func PathGroup(file string, depth int) string {
	rest, ok := strings.CutPrefix(file, "//")
	if !ok || depth <= 0 {
		return file
	}
	parts := strings.Split(rest, "/")
	dirs := parts[:len(parts)-1]
	if len(dirs) > depth {
		dirs = dirs[:depth]
	}
	return "//" + strings.Join(dirs, "/") + "/..."
}

// All scans every outcome record: an operator's occasional question, not a
// review's path.
func All(ctx context.Context, api store.ScanAPI, table string) ([]Record, error) {
	items, err := store.ScanPrefix(ctx, api, table, "OUTCOME#", "outcome scan")
	if err != nil {
		return nil, err
	}
	var mine []map[string]types.AttributeValue
	for _, it := range items {
		if pk := str(it["pk"]); strings.HasPrefix(pk, itemPrefix) || strings.HasPrefix(pk, emailPrefix) {
			mine = append(mine, it)
		}
	}
	return records(mine), nil
}
