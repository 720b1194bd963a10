package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/criticizer/criticizer/shared/domain"
)

// lineTolerance: a finding within this many lines of a planted defect's
// range still counts as finding it (a model may point at the statement
// before or after); line accuracy counts only exact hits.
const lineTolerance = 3

// Score is one configuration's (provider, model, prompt version) result
// over the corpus.
type Score struct {
	Provider, Model, PromptVersion string
	Reviews, CleanReviews          int
	Findings, TruePositives        int // findings, and those on a planted defect
	ExactLine                      int // true positives whose line lies in the defect's range
	RightCategory                  int // true positives of the defect's category
	Defects, DefectsFound          int
	CleanFindings                  int // findings on clean changes
	Dropped                        int // model findings the parser dropped (the dropped-finding SLO's measure)
	InputTokens, OutputTokens      int
	Errors                         int      // reviews that ended in an error
	Priced                         bool     // -prices given: CostUSD is the stage's estimate
	CostUSD                        float64  // the reviews' ReviewMeta.EstimatedCostUSD, summed
	Verdicts                       Verdicts // with -outcomes: the findings judged by recorded outcomes
}

// add scores one review of c.
func (s *Score) add(c Case, res domain.ReviewResult, usage [2]int) {
	s.Reviews++
	s.InputTokens += usage[0]
	s.OutputTokens += usage[1]
	s.Defects += len(c.Defects)
	meta := domain.ReadReviewMeta(res.Meta)
	s.Dropped += meta.DroppedFindings
	s.CostUSD += meta.EstimatedCostUSD
	if len(c.Defects) == 0 {
		s.CleanReviews++
		s.CleanFindings += len(res.Findings)
	}
	found := make([]bool, len(c.Defects))
	for _, f := range res.Findings {
		s.Findings++
		end := max(f.EndLine, f.Line)
		best := -1
		for i, d := range c.Defects {
			if d.File == f.File && f.Line <= d.Lines[1]+lineTolerance && end >= d.Lines[0]-lineTolerance {
				if best < 0 || !found[i] && found[best] {
					best = i
				}
			}
		}
		if best < 0 {
			continue
		}
		d := c.Defects[best]
		found[best] = true
		s.TruePositives++
		if f.Line >= d.Lines[0] && f.Line <= d.Lines[1] {
			s.ExactLine++
		}
		if f.Category == d.Category {
			s.RightCategory++
		}
	}
	for _, ok := range found {
		if ok {
			s.DefectsFound++
		}
	}
}

func ratio(a, b int) string {
	if b == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.2f", float64(a)/float64(b))
}

// Precision is true positives over findings; Recall planted defects found
// over defects planted; LineAccuracy exact lines over true positives.
func (s Score) row() []string {
	perReview := func(n int) string {
		if s.Reviews == 0 {
			return "n/a"
		}
		return fmt.Sprintf("%.0f", float64(n)/float64(s.Reviews))
	}
	cost := "n/a"
	if s.Priced {
		cost = fmt.Sprintf("$%.4f", s.CostUSD/float64(max(s.Reviews, 1)))
	}
	return []string{s.Provider, s.Model, s.PromptVersion, fmt.Sprint(s.Reviews),
		ratio(s.TruePositives, s.Findings), ratio(s.DefectsFound, s.Defects), ratio(s.ExactLine, s.TruePositives),
		ratio(s.RightCategory, s.TruePositives), ratio(s.CleanFindings, s.CleanReviews),
		ratio(s.Findings, s.Reviews), ratio(s.Dropped, s.Reviews),
		perReview(s.InputTokens), perReview(s.OutputTokens), cost, fmt.Sprint(s.Errors)}
}

var header = []string{"provider", "model", "prompt", "reviews", "precision", "recall", "line accuracy",
	"category accuracy", "findings per clean change", "valid findings per review", "dropped findings per review", "input tokens per review", "output tokens per review", "cost per review", "errors"}

// printTable writes the scores as a Markdown table.
func printTable(w io.Writer, scores []Score) {
	rows := [][]string{header}
	for _, s := range scores {
		rows = append(rows, s.row())
	}
	for i, r := range rows {
		fmt.Fprintf(w, "| %s |\n", strings.Join(r, " | "))
		if i == 0 {
			seps := slices.Repeat([]string{"---"}, len(r))
			fmt.Fprintf(w, "| %s |\n", strings.Join(seps, " | "))
		}
	}
}
