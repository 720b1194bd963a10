package main

import (
	"bufio"
	"io"
	"strconv"
	"strings"
)

// Metric is one value a benchmark reported, with its unit ("ns/op", "MB/s",
// or a b.ReportMetric unit such as "p4-invocations" or "recall").
type Metric struct {
	Value float64
	Unit  string
}

// Result is one benchmark line of `go test -bench` output.
type Result struct {
	Pkg     string // import path, from the "pkg:" line before it
	Name    string // without the "Benchmark" prefix and the -GOMAXPROCS suffix
	N       int64  // iterations
	Metrics []Metric
}

// Run is everything one `go test -bench` run printed that the table uses.
type Run struct {
	Results  []Result
	CPU      string   // the "cpu:" line
	Failures []string // "--- FAIL" and "FAIL pkg" lines
	Skips    []string // "--- SKIP" lines with the reason on the next line
}

// Parse reads `go test -bench -benchmem` output (several packages in a row).
// procs is the GOMAXPROCS the benchmarks ran with: go test appends "-procs"
// to every name when it is above 1.
func Parse(r io.Reader, procs int) (Run, error) {
	var run Run
	pkg, suffix := "", ""
	if procs > 1 {
		suffix = "-" + strconv.Itoa(procs)
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 4<<20)
	pendingSkip := -1
	for sc.Scan() {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		if pendingSkip >= 0 {
			if trimmed != "" && !strings.HasPrefix(trimmed, "---") {
				run.Skips[pendingSkip] += ": " + trimmed
			}
			pendingSkip = -1
		}
		switch {
		case strings.HasPrefix(line, "pkg: "):
			pkg = strings.TrimPrefix(line, "pkg: ")
		case strings.HasPrefix(line, "cpu: "):
			run.CPU = strings.TrimPrefix(line, "cpu: ")
		case strings.HasPrefix(trimmed, "--- FAIL"), strings.HasPrefix(line, "FAIL\t"), strings.HasPrefix(line, "FAIL "):
			run.Failures = append(run.Failures, trimmed)
		case strings.HasPrefix(trimmed, "--- SKIP"):
			run.Skips = append(run.Skips, strings.TrimSpace(strings.TrimPrefix(trimmed, "--- SKIP:")))
			pendingSkip = len(run.Skips) - 1
		case strings.HasPrefix(line, "Benchmark"):
			if res, ok := parseLine(line, suffix); ok {
				res.Pkg = pkg
				run.Results = append(run.Results, res)
			}
		}
	}
	return run, sc.Err()
}

// parseLine parses "BenchmarkName-2  100  123 ns/op  4.5 MB/s  0.98 recall".
// A line without an iteration count is a benchmark's own log output.
func parseLine(line, suffix string) (Result, bool) {
	f := strings.Fields(line)
	if len(f) < 4 || len(f)%2 != 0 {
		return Result{}, false
	}
	n, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return Result{}, false
	}
	name := strings.TrimPrefix(f[0], "Benchmark")
	if suffix != "" {
		name = strings.TrimSuffix(name, suffix)
	}
	res := Result{Name: name, N: n}
	for i := 2; i+1 < len(f); i += 2 {
		v, err := strconv.ParseFloat(f[i], 64)
		if err != nil {
			return Result{}, false
		}
		res.Metrics = append(res.Metrics, Metric{Value: v, Unit: f[i+1]})
	}
	return res, true
}
