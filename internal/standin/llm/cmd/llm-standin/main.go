// Command llm-standin runs the LLM provider stand-in on a loopback port for
// local runs and for processes (such as Lambda binaries under the emulator)
// that cannot share a test's in-process server.
//
//	LLM_STANDIN_API_KEY=... llm-standin -port 8089 [-latency 2s] [-tokens-per-minute 30000]
//
// The expected API key, when required, comes from the environment, never
// from a flag: flags are visible in the process list.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strconv"
	"syscall"

	"github.com/criticizer/criticizer/internal/standin/llm"
)

func main() {
	port := flag.Int("port", 0, "TCP port on 127.0.0.1 (0 picks a free port)")
	model := flag.String("model", "", "model name reported when a request names none")
	promptVersion := flag.String("prompt-version", "", "echo this prompt_version instead of the prompt's")
	schemaVersion := flag.String("schema-version", "", "echo this schema_version instead of the prompt's")
	latency := flag.Duration("latency", 0, "time every completion takes to answer")
	tpm := flag.Int("tokens-per-minute", 0, "enforce a tokens-per-minute limit with 429s (0: none)")
	rpm := flag.Int("requests-per-minute", 0, "enforce a requests-per-minute limit with 429s (0: none)")
	burst := flag.Duration("rate-limit-burst", 0, "how much of a minute's limit the bucket holds (default 1m)")
	flag.Parse()

	logger := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	srv := llm.NewServer(llm.Options{
		APIKey:        os.Getenv("LLM_STANDIN_API_KEY"),
		Model:         *model,
		PromptVersion: *promptVersion,
		SchemaVersion: *schemaVersion,
		Logger:        logger,
		Latency:       *latency, TokensPerMinute: *tpm, RequestsPerMinute: *rpm, RateLimitBurst: *burst,
	})
	url, err := srv.Start(net.JoinHostPort("127.0.0.1", strconv.Itoa(*port)))
	if err != nil {
		fmt.Fprintln(os.Stderr, "llm-standin:", err)
		os.Exit(1)
	}
	// The URL on stdout is the readiness signal scripts wait for.
	fmt.Println(url)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
	if err := srv.Close(); err != nil {
		logger.Error("llm-standin: close", slog.String("error", err.Error()))
	}
}
