package main

import (
	"context"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

const sample = `goos: linux
goarch: amd64
pkg: github.com/criticizer/criticizer/shared/redact
cpu: AMD EPYC
BenchmarkRedact/project-2         	       5	 210000000 ns/op	  23.80 MB/s	         0.9800 recall	 1024 B/op	      12 allocs/op
BenchmarkRedact/gitleaks-2        	       3	 640000000 ns/op	   7.81 MB/s	         0.9500 recall	 2048 B/op	      40 allocs/op
some log line a benchmark printed
PASS
ok  	github.com/criticizer/criticizer/shared/redact	4.1s
pkg: github.com/criticizer/criticizer/shared/p4
BenchmarkFetch/files=5000-2       	       1	12000000000 ns/op	        48.00 p4-invocations	       120.0 peak-MiB
--- SKIP: BenchmarkLatency
    fetch_test.go:12: needs the p4 stand-in
--- FAIL: BenchmarkBroken-2
FAIL	github.com/criticizer/criticizer/shared/p4	13.2s
`

func TestParse(t *testing.T) {
	run, err := Parse(strings.NewReader(sample), 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Results) != 3 {
		t.Fatalf("results = %+v, want 3", run.Results)
	}
	r := run.Results[2]
	if r.Pkg != "github.com/criticizer/criticizer/shared/p4" || r.Name != "Fetch/files=5000" || r.N != 1 {
		t.Errorf("result = %+v", r)
	}
	want := []Metric{{12e9, "ns/op"}, {48, "p4-invocations"}, {120, "peak-MiB"}}
	if len(r.Metrics) != len(want) {
		t.Fatalf("metrics = %v, want %v", r.Metrics, want)
	}
	for i := range want {
		if r.Metrics[i] != want[i] {
			t.Errorf("metric %d = %v, want %v", i, r.Metrics[i], want[i])
		}
	}
	if run.Results[0].Name != "Redact/project" || run.Results[0].Metrics[2] != (Metric{0.98, "recall"}) {
		t.Errorf("first result = %+v", run.Results[0])
	}
	if run.CPU != "AMD EPYC" {
		t.Errorf("cpu = %q", run.CPU)
	}
	if len(run.Failures) != 2 {
		t.Errorf("failures = %q, want the --- FAIL and the FAIL pkg lines", run.Failures)
	}
	if len(run.Skips) != 1 || !strings.Contains(run.Skips[0], "needs the p4 stand-in") {
		t.Errorf("skips = %q, want the reason", run.Skips)
	}
}

func TestParseKeepsSuffixOnOneProc(t *testing.T) {
	run, _ := Parse(strings.NewReader("BenchmarkX/n-2 10 5 ns/op\n"), 1)
	if len(run.Results) != 1 || run.Results[0].Name != "X/n-2" {
		t.Errorf("results = %+v: with GOMAXPROCS=1 go test adds no suffix, so -2 is part of the name", run.Results)
	}
}

func TestRender(t *testing.T) {
	run, _ := Parse(strings.NewReader(sample), 2)
	results := append(run.Results, Result{Pkg: "functions/fetch", Name: "ColdStart", N: 5,
		Metrics: []Metric{{14.2, "bootstrap-MB"}, {12.5, "init-ms"}}})
	var b strings.Builder
	if err := Render(&b, results); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 2+len(results) {
		t.Fatalf("got %d lines, want header, rule and %d rows:\n%s", len(lines), len(results), b.String())
	}
	header := strings.Fields(strings.ReplaceAll(lines[0], "|", " "))
	wantCols := []string{"package", "benchmark", "ns/op", "MB/s", "recall", "p4-invocations", "peak-MiB", "bootstrap-MB", "init-ms", "B/op", "allocs/op"}
	if strings.Join(header, ",") != strings.Join(wantCols, ",") {
		t.Errorf("columns = %v, want %v", header, wantCols)
	}
	for _, l := range lines {
		if len(l) != len(lines[0]) {
			t.Errorf("row not aligned with the header:\n%s\n%s", lines[0], l)
		}
	}
	for _, want := range []string{"12.00s", "210.00ms", "0.98", "48", "120", "14.2", "12.5", "shared/p4", "Fetch/files=5000"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
}

func TestFormatValue(t *testing.T) {
	tests := []struct {
		v    float64
		unit string
		want string
	}{
		{1500, "ns/op", "1.50µs"}, {999, "ns/op", "999ns"}, {2.5e9, "ns/op", "2.50s"},
		{48, "p4-invocations", "48"}, {0.98765, "recall", "0.988"}, {23.84, "MB/s", "23.8"}, {3.14159, "init-ms", "3.14"}, {1234.5, "peak-MiB", "1234"},
	}
	for _, tt := range tests {
		if got := formatValue(tt.v, tt.unit); got != tt.want {
			t.Errorf("formatValue(%v, %s) = %q, want %q", tt.v, tt.unit, got, tt.want)
		}
	}
}

// TestMain doubles as a fake function for TestMeasureInit: with
// BENCH_FAKE_FUNCTION set, this binary reads a secret through the endpoint
// and then asks the runtime API for an invocation, as a real bootstrap does.
func TestMain(m *testing.M) {
	switch os.Getenv("BENCH_FAKE_FUNCTION") {
	case "":
		os.Exit(m.Run())
	case "exit":
		os.Exit(3)
	case "ok":
		api, endpoint := os.Getenv("AWS_LAMBDA_RUNTIME_API"), os.Getenv("AWS_ENDPOINT_URL")
		req, _ := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(`{"SecretId":"bench/llm"}`))
		req.Header.Set("X-Amz-Target", "secretsmanager.GetSecretValue")
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != http.StatusOK {
			os.Exit(4)
		}
		_, _ = http.Get("http://" + api + "/2018-06-01/runtime/invocation/next")
		os.Exit(5) // not reached when the bench stops the process first
	}
}

func TestMeasureInit(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	d, err := MeasureInit(context.Background(), self, []string{"BENCH_FAKE_FUNCTION=ok"})
	if err != nil {
		t.Fatal(err)
	}
	if d <= 0 || d > 30*time.Second {
		t.Errorf("init = %v, want the positive time until the runtime API call", d)
	}
	if _, err := MeasureInit(context.Background(), self, []string{"BENCH_FAKE_FUNCTION=exit"}); err == nil || !strings.Contains(err.Error(), "exited before asking") {
		t.Errorf("a function that exits at init: err = %v, want it reported", err)
	}
}

// TestLargeReviewTable: the large-review rows leave the main table for
// their own, with a verdict against the targets.
func TestLargeReviewTable(t *testing.T) {
	out := "pkg: github.com/criticizer/criticizer/shared/llmstage\n" +
		"BenchmarkLargeReview/prompt=1.0.0-2 1 4246046487 ns/op 0 429s 1.000 attempts 0 cached-in/line 3.991 floor-s 28.19 uncached-in/line 4.169 wall-s 1.044 wall/floor 332144008 B/op 58789 allocs/op\n" +
		"BenchmarkLargeReview/prompt=1.2.0-2 1 9046487000 ns/op 7 429s 2.000 attempts 0.4 cached-in/line 3.991 floor-s 27.9 uncached-in/line 8.1 wall-s 2.03 wall/floor 3 B/op 5 allocs/op\n" +
		"BenchmarkOther-2 10 5 ns/op\n"
	run, _ := Parse(strings.NewReader(out), 2)
	rest, large := splitLargeReview(run.Results)
	if len(rest) != 1 || len(large) != 2 {
		t.Fatalf("split %d/%d, want 1 main row and 2 large-review rows", len(rest), len(large))
	}
	var b strings.Builder
	if err := renderLargeReview(&b, large); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"wall/floor", "uncached-in/line", "LargeReview/prompt=1.0.0: wall 1.04 × the floor, 1 attempt(s): meets the targets",
		"LargeReview/prompt=1.2.0: wall 2.03 × the floor, 2 attempt(s): MISSES the targets"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("large-review output lacks %q:\n%s", want, b.String())
		}
	}
}

// The cost formula printed under the request table is the line through the
// measured reviews, and only when every review lies on it.
func TestRequestFormula(t *testing.T) {
	review := func(r, total int) reviewCount {
		return reviewCount{Recipients: r, Calls: map[call]int{{Fn: "notify", Op: "dynamodb.UpdateItem"}: total}}
	}
	for _, tc := range []struct {
		counts []reviewCount
		want   string
	}{
		{[]reviewCount{review(1, 20), review(2, 22), review(5, 28)}, "18 + 2R"},
		{[]reviewCount{review(1, 14), review(2, 16), review(5, 22)}, "12 + 2R"},
		{[]reviewCount{review(1, 20), review(2, 23), review(5, 28)}, ""}, // not a line
		{[]reviewCount{review(1, 20)}, ""},
	} {
		got, ok := fit(tc.counts)
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("fit(%v) = %q, %v; want %q", tc.counts, got, ok, tc.want)
		}
	}
}
