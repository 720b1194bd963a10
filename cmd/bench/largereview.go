package main

import (
	"fmt"
	"io"
)

// The large-review rows (BenchmarkLargeReview in shared/llmstage) carry
// units of their own — wall time against the floor a provider's rate limit
// imposes, attempts, 429s met, input tokens billed per reviewed changed
// line — so they get their own table, with the verdict against the targets
// (wall ≤ 1.3 × floor, one attempt), instead of seven mostly empty columns
// in the main one.
const (
	floorRatioUnit = "wall/floor"
	attemptsUnit   = "attempts"
	maxFloorRatio  = 1.3
)

// splitLargeReview separates the rows that report wall/floor.
func splitLargeReview(results []Result) (rest, large []Result) {
	for _, r := range results {
		if _, ok := metric(r, floorRatioUnit); ok {
			large = append(large, r)
		} else {
			rest = append(rest, r)
		}
	}
	return rest, large
}

func metric(r Result, unit string) (float64, bool) {
	for _, m := range r.Metrics {
		if m.Unit == unit {
			return m.Value, true
		}
	}
	return 0, false
}

// renderLargeReview writes the large-review table and one verdict per row.
func renderLargeReview(w io.Writer, rows []Result) error {
	if len(rows) == 0 {
		return nil
	}
	fmt.Fprintf(w, "\nLarge review against a rate-limited provider (targets: wall/floor <= %.1f, 1 attempt):\n\n", maxFloorRatio)
	if err := Render(w, rows); err != nil {
		return err
	}
	for _, r := range rows {
		ratio, _ := metric(r, floorRatioUnit)
		attempts, _ := metric(r, attemptsUnit)
		verdict := "meets the targets"
		if ratio > maxFloorRatio || attempts != 1 {
			verdict = "MISSES the targets"
		}
		fmt.Fprintf(w, "%s: wall %.2f × the floor, %s attempt(s): %s\n", r.Name, ratio, formatValue(attempts, attemptsUnit), verdict)
	}
	return nil
}
