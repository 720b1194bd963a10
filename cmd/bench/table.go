package main

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"
)

// Standard units come first and last, in this order; units reported with
// b.ReportMetric go between them in the order they first appear.
var (
	leadUnits  = []string{"ns/op", "MB/s"}
	trailUnits = []string{"B/op", "allocs/op"}
)

// Columns returns the table's metric columns: every unit any result has.
func Columns(results []Result) []string {
	var units []string // in the order they first appear
	for _, r := range results {
		for _, m := range r.Metrics {
			if !slices.Contains(units, m.Unit) {
				units = append(units, m.Unit)
			}
		}
	}
	rank := func(u string) int {
		if i := slices.Index(leadUnits, u); i >= 0 {
			return i - len(leadUnits)
		}
		return slices.Index(trailUnits, u) + 1 // custom units 0
	}
	slices.SortStableFunc(units, func(a, b string) int { return cmp.Compare(rank(a), rank(b)) })
	return units
}

// Render writes one aligned Markdown table: a row per result, a column per
// unit, blank where a benchmark did not report that unit.
func Render(w io.Writer, results []Result) error {
	cols := Columns(results)
	header := append([]string{"package", "benchmark"}, cols...)
	rows := [][]string{header}
	for _, r := range results {
		row := []string{shortPkg(r.Pkg), r.Name}
		for _, c := range cols {
			cell := ""
			if v, ok := metric(r, c); ok {
				cell = formatValue(v, c)
			}
			row = append(row, cell)
		}
		rows = append(rows, row)
	}
	width := make([]int, len(header))
	for _, row := range rows {
		for i, cell := range row {
			width[i] = max(width[i], len(cell))
		}
	}
	rule := make([]string, len(width)) // as wide as its column, so it is written as a row
	for i, n := range width {
		rule[i] = strings.Repeat("-", n)
		if i >= 2 {
			rule[i] = rule[i][1:] + ":"
		}
	}
	var b strings.Builder
	for _, row := range slices.Insert(rows, 1, rule) {
		b.WriteString("|")
		for i, cell := range row {
			if i < 2 { // names left, numbers right
				fmt.Fprintf(&b, " %-*s |", width[i], cell)
			} else {
				fmt.Fprintf(&b, " %*s |", width[i], cell)
			}
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func shortPkg(p string) string {
	return strings.TrimPrefix(p, "github.com/criticizer/criticizer/")
}

// formatValue prints ns/op as a duration and other values with three
// significant digits at most (integers as they are).
func formatValue(v float64, unit string) string {
	if unit == "ns/op" {
		d := time.Duration(v)
		switch {
		case d >= time.Second:
			return fmt.Sprintf("%.2fs", d.Seconds())
		case d >= time.Millisecond:
			return fmt.Sprintf("%.2fms", float64(d)/float64(time.Millisecond))
		case d >= time.Microsecond:
			return fmt.Sprintf("%.2fµs", float64(d)/float64(time.Microsecond))
		}
		return fmt.Sprintf("%.0fns", v)
	}
	a := math.Abs(v)
	switch {
	case v == math.Trunc(v) && a < 1e12:
		return fmt.Sprintf("%.0f", v)
	case a >= 100:
		return fmt.Sprintf("%.0f", v)
	case a >= 10:
		return fmt.Sprintf("%.1f", v)
	case a >= 1:
		return fmt.Sprintf("%.2f", v)
	}
	return fmt.Sprintf("%.3g", v)
}
