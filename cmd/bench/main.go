// Command bench runs the project's benchmarks and prints them as one table:
// every `go test -bench` result with its standard and custom units
// (b.ReportMetric: p4-invocations, peak-MiB, recall, requests, …), plus a
// row per function with its bootstrap size and cold-start time, measured by
// running the bootstrap against a fake Lambda runtime API. `make bench` runs
// it; docs/benchmarks.md shows its latest output.
//
//	bench [-bench REGEXP] [-benchtime D] [-pkgs "./..."] [-runs N] [-raw FILE] [-no-functions] [-no-go-test] [-scale=false] [-scale-rows 0,10000,100000] [-requests=false] [-requests-doc docs/benchmarks.md] [-local-model=false]
//
// The request benchmark (requests.go) and the scale benchmark (scale.go)
// deploy the stack on the emulator: the first counts every DynamoDB and SQS
// request of one review end to end, the second what one sweeper run reads
// as the history grows; the local-model
// benchmark (localmodel.go) times a real model server reviewing one change.
package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/criticizer/criticizer/internal/devstack"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	benchRe := fs.String("bench", ".", "benchmarks to run (go test -bench)")
	benchtime := fs.String("benchtime", "", "go test -benchtime (default go test's)")
	pkgs := fs.String("pkgs", "./...", "packages to benchmark, space-separated")
	runs := fs.Int("runs", 5, "cold starts per function; the table shows the median")
	raw := fs.String("raw", ".run/bench.txt", "where to keep the raw go test output")
	noFunctions := fs.Bool("no-functions", false, "skip the bootstrap size and cold-start rows")
	noGoTest := fs.Bool("no-go-test", false, "skip go test -bench")
	scale := fs.Bool("scale", true, "run the scale benchmark: the deployed sweeper over N rows of history on the emulator")
	fs.BoolVar(&scaleVerbose, "scale-verbose", false, "print the sweeper's answers in the scale benchmark")
	scaleRows := fs.String("scale-rows", "0,10000,100000", "the history sizes N of the scale benchmark")
	requests := fs.Bool("requests", true, "run the request benchmark: every DynamoDB and SQS request of one review, end to end on the emulator, for 1, 2 and 5 recipients")
	requestsDoc := fs.String("requests-doc", "", "write the request benchmark's table into this file's requests block (docs/benchmarks.md)")
	localModel := fs.Bool("local-model", true, "run the local model benchmark: a real model server (llama.cpp with SmolLM2, localstack/llama.sh) reviewing one change")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var results []Result
	var parsed Run
	if !*noGoTest {
		var err error
		parsed, err = goBench(ctx, *benchRe, *benchtime, strings.Fields(*pkgs), *raw)
		if err != nil {
			return err
		}
		results = append(results, parsed.Results...)
	}
	var fnErrs []string
	if !*noFunctions {
		rows, errs := functionRows(ctx, *runs)
		results = append(results, rows...)
		fnErrs = errs
	}
	fmt.Fprintf(out, "Machine: %s, %d cores, %s/%s, %s, %s\n\n", cmp.Or(parsed.CPU, cpuModel()), runtime.NumCPU(), runtime.GOOS, runtime.GOARCH,
		runtime.Version(), time.Now().UTC().Format("2006-01-02 15:04 MST"))
	results, large := splitLargeReview(results)
	if len(results) > 0 {
		if err := Render(out, results); err != nil {
			return err
		}
	}
	if err := renderLargeReview(out, large); err != nil {
		return err
	}
	for _, s := range parsed.Skips {
		fmt.Fprintln(out, "\nskipped:", s)
	}
	if *scale || *requests {
		fnErrs = append(fnErrs, onStack(ctx, out, *scale, *scaleRows, *requests, *requestsDoc)...)
	}
	fnErrs = append(fnErrs, runTour(out)...) // tour.go
	if *localModel {
		if err := runLocalModel(ctx, out); err != nil {
			fnErrs = append(fnErrs, "local model: "+err.Error())
		}
	}
	problems := append(slices.Clone(parsed.Failures), fnErrs...)
	if len(problems) > 0 {
		return fmt.Errorf("%d failures:\n  %s", len(problems), strings.Join(problems, "\n  "))
	}
	return nil
}

// onStack deploys the stack on the emulator once, every function's AWS
// calls through a wireCounter, and runs the scale and request benchmarks on it.
func onStack(ctx context.Context, out io.Writer, scale bool, scaleRows string, requests bool, requestsDoc string) []string {
	sizes, err := parseSizes(scaleRows)
	if err != nil {
		return []string{"scale: " + err.Error()}
	}
	wire, err := newWireCounter()
	if err != nil {
		return []string{err.Error()}
	}
	defer wire.Close()
	devstack.Logf = func(string, ...any) {}
	fmt.Fprintln(out, "\ndeploying the stack on the emulator…")
	l, err := devstack.StartLocal(ctx, devstack.LocalOptions{FunctionEndpoint: wire.setUpstream})
	if err != nil {
		return []string{"deploying the stack: " + err.Error()}
	}
	defer l.Close()
	if err := disableSchedules(ctx, l.AWS, l.StackName); err != nil {
		return []string{"turning the schedules off, so no scheduled run is counted: " + err.Error()}
	}
	var errs []string
	// Scale first: its history is cloned from the table's one job.
	if scale {
		if err := runScale(ctx, l, wire, sizes, out); err != nil {
			errs = append(errs, "scale: "+err.Error())
		}
	}
	if requests {
		if err := runRequests(ctx, l, wire, out, requestsDoc); err != nil {
			errs = append(errs, "requests: "+err.Error())
		}
	}
	return errs
}

// goBench runs go test -bench over pkgs, keeping the raw output in rawPath.
func goBench(ctx context.Context, benchRe, benchtime string, pkgs []string, rawPath string) (Run, error) {
	// -tags integration: the emulator benchmarks (integration/) are behind the build tag.
	args := []string{"test", "-tags", "integration", "-run", "^$", "-bench", benchRe, "-benchmem"}
	if benchtime != "" {
		args = append(args, "-benchtime", benchtime)
	}
	args = append(args, pkgs...)
	if err := os.MkdirAll(filepath.Dir(rawPath), 0o755); err != nil {
		return Run{}, err
	}
	f, err := os.Create(rawPath)
	if err != nil {
		return Run{}, err
	}
	defer f.Close()
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Stdout, cmd.Stderr = f, os.Stderr
	fmt.Fprintln(os.Stderr, "bench: go", strings.Join(args, " "), ">", rawPath)
	runErr := cmd.Run() // a failing package still prints the others' results
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return Run{}, err
	}
	parsed, err := Parse(f, runtime.GOMAXPROCS(0))
	if err != nil {
		return Run{}, err
	}
	if runErr != nil && len(parsed.Failures) == 0 {
		parsed.Failures = append(parsed.Failures, "go test: "+runErr.Error())
	}
	return parsed, nil
}

// functionRows builds every function's bootstrap as the deploy does
// (devstack.BuildFunctions) and reports its size and median cold start.
func functionRows(ctx context.Context, runs int) ([]Result, []string) {
	dir, err := os.MkdirTemp("", "bench-bootstrap-")
	if err != nil {
		return nil, []string{err.Error()}
	}
	defer os.RemoveAll(dir)
	if _, err := devstack.BuildFunctions(ctx, devstack.BuildOptions{OutDir: dir}); err != nil {
		return nil, []string{err.Error()}
	}
	var rows []Result
	var errs []string
	for _, name := range devstack.FunctionNames {
		bin := filepath.Join(dir, name, "bootstrap")
		fi, err := os.Stat(bin)
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		row := Result{Pkg: "functions/" + name, Name: "ColdStart", N: int64(runs),
			Metrics: []Metric{{Value: float64(fi.Size()) / 1e6, Unit: "bootstrap-MB"}}}
		var times []time.Duration
		for range runs {
			d, err := MeasureInit(ctx, bin, FunctionEnv[name])
			if err != nil {
				errs = append(errs, fmt.Sprintf("cold start of functions/%s: %v", name, err))
				break
			}
			times = append(times, d)
		}
		if len(times) == runs && runs > 0 {
			slices.Sort(times)
			row.Metrics = append(row.Metrics, Metric{Value: float64(times[len(times)/2].Microseconds()) / 1000, Unit: "init-ms"})
		}
		rows = append(rows, row)
	}
	return rows, errs
}

// parseSizes reads "0,10000,100000".
func parseSizes(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 0 {
			return nil, fmt.Errorf("history size %q: not a count", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// cpuModel reads the CPU's name when go test did not print it.
func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
}
