package fetchstage

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"runtime/metrics"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/criticizer/criticizer/internal/standin/p4depot"
	"github.com/criticizer/criticizer/shared/artifacts"
	"github.com/criticizer/criticizer/shared/depot"
	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/p4"
	"github.com/criticizer/criticizer/shared/redact"
)

// countingRunner counts p4 invocations.
type countingRunner struct {
	next p4.CommandRunner
	n    atomic.Int64
}

func (c *countingRunner) Run(ctx context.Context, command string, args ...string) ([]p4.Record, error) {
	c.n.Add(1)
	return c.next.Run(ctx, command, args...)
}

// discardBucket reads what is stored and keeps none of it, so that the
// peak heap is the stage's own, as on S3.
type discardBucket struct{ artifacts.API }

func (discardBucket) PutObject(_ context.Context, in *s3.PutObjectInput, _ ...func(*s3.Options)) (*s3.PutObjectOutput, error) {
	_, err := io.Copy(io.Discard, in.Body)
	return &s3.PutObjectOutput{}, err
}

// peakHeap samples the live heap until stop is closed and returns its peak.
func peakHeap(stop <-chan struct{}) <-chan uint64 {
	out := make(chan uint64, 1)
	go func() {
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		var peak uint64
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(s)
			peak = max(peak, s[0].Value.Uint64())
			select {
			case <-stop:
				out <- peak
				return
			case <-t.C:
			}
		}
	}()
	return out
}

// BenchmarkFetchRedactStore runs the fetch stage (p4 stand-in → redaction →
// in-memory artifact store) on generated changelists of 10, 1,000 and 5,000
// files. P4_BENCH_LATENCY (default 20ms; 0 for none) makes the stand-in sleep
// that long per command, like a server one network round trip away. Reported: p4
// invocations and peak live heap per changelist (the stage's own: artifacts
// are streamed through local disk to a store that keeps nothing).
func BenchmarkFetchRedactStore(b *testing.B) {
	latency := 20 * time.Millisecond // the acceptance case; P4_BENCH_LATENCY=0 for none
	if v := os.Getenv("P4_BENCH_LATENCY"); v != "" {
		var err error
		if latency, err = time.ParseDuration(v); err != nil {
			b.Fatalf("P4_BENCH_LATENCY: %v", err)
		}
	}
	bin, err := p4depot.BuildStandin(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	allow, err := depot.NewAllowList([]string{"//depot/projectA/..."}, nil)
	if err != nil {
		b.Fatal(err)
	}
	red, err := redact.New(redact.Policy{})
	if err != nil {
		b.Fatal(err)
	}
	for _, files := range []int{10, 1000, 5000} {
		b.Run(fmt.Sprintf("files=%d/latency=%s", files, latency), func(b *testing.B) {
			dir := b.TempDir()
			if err := p4depot.Generate(dir, p4depot.Spec{Change: 4242, Files: files, Latency: latency}); err != nil {
				b.Fatal(err)
			}
			runner, err := p4.NewRunner(p4.Config{Path: bin, Port: dir, User: "bench", Home: b.TempDir(), Timeout: time.Minute}, nil)
			if err != nil {
				b.Fatal(err)
			}
			count := &countingRunner{next: runner}
			fetcher, err := p4.NewFetcher(count, allow, nil)
			if err != nil {
				b.Fatal(err)
			}
			stage := &Fetch{P4: fetcher, Redactor: red, Raw: artifacts.New(discardBucket{}, "raw"), Redacted: artifacts.New(discardBucket{}, "redacted"),
				Log: slog.New(slog.DiscardHandler), SpoolDir: b.TempDir()}
			runtime.GC()
			stop := make(chan struct{})
			peak := peakHeap(stop)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				j := &job.Job{ID: fmt.Sprintf("bench-%d", i), Changelist: 4242}
				if _, err := stage.Process(context.Background(), j); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			close(stop)
			b.ReportMetric(float64(count.n.Load())/float64(b.N), "p4-invocations")
			b.ReportMetric(float64(<-peak)/(1<<20), "peak-MiB")
		})
	}
}
