package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/criticizer/criticizer/shared/domain"
)

// TestCorpusCoversTheStudioLanguages: at least 30 labelled changelists, in
// C++, C#, shader code, Python build scripts and a Go tool, with planted
// defects and clean changes, every label on a line of its file.
func TestCorpusCoversTheStudioLanguages(t *testing.T) {
	cases, err := loadCorpus("../../eval/corpus")
	if err != nil {
		t.Fatal(err)
	}
	langs := map[string]int{}
	clean := 0
	for _, c := range cases {
		langs[c.Language]++
		if len(c.Defects) == 0 {
			clean++
		}
	}
	if len(cases) < 30 || clean < 5 || len(cases)-clean < 20 {
		t.Errorf("%d cases, %d clean", len(cases), clean)
	}
	for _, l := range []string{"C++", "C#", "HLSL", "GLSL", "Python", "Go"} {
		if langs[l] < 2 {
			t.Errorf("%d cases in %s", langs[l], l)
		}
	}
}

// TestEvalAgainstTheStandin runs the harness end to end against the LLM
// stand-in (which proves the harness, not a model): the stand-in's rules
// find the strcpy/sprintf/shell/Task.Result defects, the pipeline the
// committed keys, its TODO rule fires on one clean change.
func TestEvalAgainstTheStandin(t *testing.T) {
	var out bytes.Buffer
	o := options{corpus: "../../eval/corpus", provider: "standin", prompts: "1.0.0,1.2.0", timeout: 10 * time.Second}
	if err := run(context.Background(), o, &out); err != nil {
		t.Fatal(err)
	}
	table := out.String()
	for _, want := range []string{
		"| provider | model | prompt | reviews | precision | recall | line accuracy |",
		"| standin | standin-reviewer-1 | 1.0.0 | 33 | 0.86 | 0.26 | 1.00 | 1.00 | 0.09 |",
		"| standin | standin-reviewer-1 | 1.2.0 | 33 |",
	} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
	if !strings.HasSuffix(strings.TrimSpace(table), "| 0 |") {
		t.Errorf("reviews failed:\n%s", table)
	}
}

// The cost column is the llm stage's own estimate of each review
// (ReviewMeta.EstimatedCostUSD, from llm.Prices.Cost: cached input at its
// own price), averaged over the reviews, never a formula of eval's own: a
// review whose input was mostly read from the prompt cache costs what the
// stage said, not its tokens at the input price.
func TestCostIsTheStagesEstimate(t *testing.T) {
	s := Score{Priced: true}
	for _, usd := range []float64{0.0125, 0.0075} {
		res := resultWith()
		res.Meta = domain.ReviewMeta{InputTokens: 10000, OutputTokens: 100, EstimatedCostUSD: usd}.Map()
		s.add(Case{}, res, [2]int{10000, 100})
	}
	if row := strings.Join(s.row(), "|"); !strings.Contains(row, "|10000|100|$0.0100|") {
		t.Errorf("row = %s: want the stage's estimates averaged, $0.0100 a review", row)
	}
	if row := strings.Join(Score{}.row(), "|"); !strings.Contains(row, "|n/a|0") {
		t.Errorf("row without -prices = %s: want the cost n/a", row)
	}
}

// TestScore checks the arithmetic on a hand-made case.
func TestScore(t *testing.T) {
	var s Score
	c := Case{Defects: []Defect{{File: "f", Lines: [2]int{10, 12}, Category: "security"}, {File: "f", Lines: [2]int{40, 40}, Category: "correctness"}}}
	s.add(c, resultWith(finding("f", 11, "security"), finding("f", 14, "style"), finding("f", 90, "style"), finding("g", 40, "correctness")), [2]int{100, 10})
	s.add(Case{}, resultWith(finding("f", 1, "style")), [2]int{50, 5})
	if s.TruePositives != 2 || s.Findings != 5 || s.DefectsFound != 1 || s.ExactLine != 1 || s.RightCategory != 1 || s.CleanFindings != 1 {
		t.Errorf("score = %+v", s)
	}
	row := strings.Join(s.row(), "|")
	if !strings.Contains(row, "|0.40|0.50|0.50|0.50|1.00|2.50|0.00|75|8|") {
		t.Errorf("row = %s", row)
	}
}
