// Command eval measures review quality: it runs the real llm stage
// (shared/llmstage: redaction, chunking, the prompt, the provider, the
// parser, the pipeline's own findings, the out-of-view filter) over a
// labelled corpus of changelists with planted defects and clean changes
// (eval/corpus), and prints precision, recall, line accuracy, findings per
// clean change, and tokens and cost per review, per provider, model and
// prompt version.
//
//	make eval                       # against the LLM stand-in: proves the harness, not a model
//	make eval LLM=local             # against a real model server started here (llama.cpp, SmolLM2-135M)
//	go run ./cmd/eval -provider openai -endpoint https://api.openai.com -model gpt-4o \
//	    -api-key-env OPENAI_API_KEY -prices input=2.5,cached_input=1.25,output=10
//	go run ./cmd/eval -provider openai -endpoint http://vllm.internal:8000 -model my-model \
//	    -response-format auto -context-tokens 8192
//
// Run it against the real provider and model before promoting a prompt
// version (README, "Measuring review quality"). With -outcomes it also
// judges each configuration's findings on the corpus by what reviewers did
// with real ones (`criticizer outcomes export`): the recorded fate of the
// same finding or of its kind.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	awsconfig "github.com/aws/aws-sdk-go-v2/config"

	"github.com/criticizer/criticizer/internal/devstack"
	llmstandin "github.com/criticizer/criticizer/internal/standin/llm"
	"github.com/criticizer/criticizer/shared/artifacts"
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/llm"
	_ "github.com/criticizer/criticizer/shared/llm/bedrock" // the bedrock family
	"github.com/criticizer/criticizer/shared/llmstage"
	"github.com/criticizer/criticizer/shared/obs"
	"github.com/criticizer/criticizer/shared/redact"
	"github.com/criticizer/criticizer/shared/result"
)

// options are the command's flags.
type options struct {
	corpus, provider, endpoint, model, keyEnv, prompts string
	outcomes, responseFormat                           string
	prices                                             string // LLM_PRICES_PER_MTOK's form, read by llm.ParsePrices
	contextTokens, maxTokens                           int
	timeout                                            time.Duration
	verbose                                            bool
}

func main() {
	var o options
	flag.StringVar(&o.corpus, "corpus", "eval/corpus", "directory of labelled cases (*.yaml)")
	flag.StringVar(&o.provider, "provider", "standin", "standin | local (a model server started here: llama.cpp with SmolLM2-135M) | openai | anthropic | bedrock")
	flag.StringVar(&o.responseFormat, "response-format", "", "openai: auto (default) | json_schema | json_object_schema | json_object")
	flag.IntVar(&o.contextTokens, "context-tokens", 0, "the model's context window (0: what the server reports, else by model family)")
	flag.IntVar(&o.maxTokens, "max-tokens", 0, "output tokens per call (0: 4096, at most a quarter of the window)")
	flag.StringVar(&o.endpoint, "endpoint", "", "provider base URL (openai, anthropic; optional for bedrock)")
	flag.StringVar(&o.model, "model", "", "model name or Bedrock model id (required but for standin)")
	flag.StringVar(&o.keyEnv, "api-key-env", "LLM_API_KEY", "environment variable holding the API key (openai, anthropic)")
	flag.StringVar(&o.prompts, "prompts", strings.Join(allVersions(), ","), "prompt versions to evaluate, comma-separated")
	flag.StringVar(&o.prices, "prices", "", "the model's list prices, USD per million tokens, as LLM_PRICES_PER_MTOK: input=3,cached_input=0.3,cache_write=3.75,output=15 (the cost column: the llm stage's own estimate)")
	flag.DurationVar(&o.timeout, "timeout", 60*time.Second, "per model call")
	flag.BoolVar(&o.verbose, "v", false, "print each case's findings")
	flag.StringVar(&o.outcomes, "outcomes", "", "recorded outcomes to judge by (`criticizer outcomes export` JSON lines): judge each configuration's findings by what reviewers did with them")
	flag.Parse()
	if err := run(context.Background(), o, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "eval:", err)
		os.Exit(1)
	}
}

func allVersions() []string {
	return []string{result.BasePromptVersion, result.ChunkAwarePromptVersion, result.RulesPromptVersion}
}

// run evaluates every prompt version over the corpus and prints the table.
func run(ctx context.Context, o options, w io.Writer) error {
	cases, err := loadCorpus(o.corpus)
	if err != nil {
		return err
	}
	// The cost column is the stage's own estimate (ReviewMeta.EstimatedCostUSD,
	// llm.Prices.Cost): cached and cache-written input at their own prices.
	prices, err := llm.ParsePrices(o.prices)
	if err != nil {
		return fmt.Errorf("-prices: %w", err)
	}
	complete, model, window, stop, err := provider(ctx, o)
	if err != nil {
		return err
	}
	defer stop()
	budget := result.Budget{ContextTokens: o.contextTokens, OutputTokens: o.maxTokens}
	llmstage.DiscoverWindow(ctx, &budget, window, slog.New(slog.DiscardHandler))
	red, err := redact.New(redact.Policy{})
	if err != nil {
		return err
	}
	var recorded *Recorded
	if o.outcomes != "" {
		if recorded, err = loadOutcomes(o.outcomes); err != nil {
			return err
		}
	}
	var scores []Score
	for _, version := range strings.Split(o.prompts, ",") {
		version = strings.TrimSpace(version)
		if !result.KnownPromptVersion(version) {
			return fmt.Errorf("prompt version %q has no template in this build (known: %s)", version, strings.Join(allVersions(), ", "))
		}
		s := Score{Provider: o.provider, Model: model, PromptVersion: version, Priced: prices != llm.Prices{}}
		rollout := result.Rollout{Candidate: version, Percent: 100}
		if version == result.StablePromptVersion {
			rollout = result.Rollout{}
		}
		mem := artifacts.NewMemoryBucket()
		stage := &llmstage.LLM{Redacted: artifacts.New(mem, "eval"), Guard: red, LLM: complete, Model: model,
			Rollout: rollout, Budget: budget, Terms: llmstage.ModelTerms{Prices: prices}, Metrics: obs.NewMetrics(io.Discard, "eval"), Log: slog.New(slog.DiscardHandler)}
		for i, c := range cases {
			res, cs, usage, err := reviewCase(ctx, stage, red, c, int64(1000+i), version)
			if err != nil {
				s.Errors++
				fmt.Fprintf(os.Stderr, "eval: %s (prompt %s): %v\n", c.Name, version, err)
				continue
			}
			s.add(c, res, usage)
			if recorded != nil {
				s.Verdicts.add(recorded, res, cs)
			}
			if o.verbose {
				printCase(w, c, res)
			}
		}
		scores = append(scores, s)
	}
	fmt.Fprintf(w, "Review quality over %d changelists (%d clean) in %s:\n\n", len(cases), countClean(cases), o.corpus)
	printTable(w, scores)
	if recorded != nil {
		printVerdicts(w, o.outcomes, recorded, scores)
	}
	if o.provider == providerLocal {
		// Its reviews that fail are the model's (a 135M model's unusable
		// answers, SCHEMA_INVALID), counted in the errors column.
		fmt.Fprintf(w, "\nThese are a 135M-parameter model's numbers (%s on 2 CPU cores): they prove the path to your own model server, not review quality.\n", model)
		return nil
	}
	for _, s := range scores {
		if s.Errors > 0 {
			return fmt.Errorf("%d review(s) failed under prompt %s (see above)", s.Errors, s.PromptVersion)
		}
	}
	return nil
}

func countClean(cs []Case) int {
	n := 0
	for _, c := range cs {
		if len(c.Defects) == 0 {
			n++
		}
	}
	return n
}

// reviewCase runs the llm stage on one case, as the pipeline would after
// fetch: the diffs redacted, the changeset stored, the stage's Process. It
// returns the redacted changeset too: fingerprints are made on it.
func reviewCase(ctx context.Context, stage *llmstage.LLM, red *redact.Redactor, c Case, cl int64, version string) (domain.ReviewResult, *domain.Changeset, [2]int, error) {
	cs := c.Changeset(cl)
	for i := range cs.Files {
		d, _, err := red.Redact(cs.Files[i].Diff)
		if err != nil {
			return domain.ReviewResult{}, nil, [2]int{}, err
		}
		cs.Files[i].Diff = d
	}
	id := "eval-" + version + "-" + c.Name
	key := artifacts.Key(id, "changeset.json")
	if err := stage.Redacted.PutJSON(ctx, key, cs); err != nil {
		return domain.ReviewResult{}, nil, [2]int{}, err
	}
	out, err := stage.Process(ctx, &job.Job{ID: id, Changelist: cl, Artifacts: job.Artifacts{Redacted: key}})
	if err != nil {
		return domain.ReviewResult{}, nil, [2]int{}, err
	}
	var res domain.ReviewResult
	if err := stage.Redacted.GetJSON(ctx, out.Artifacts.Result, &res); err != nil {
		return domain.ReviewResult{}, nil, [2]int{}, err
	}
	return res, &cs, [2]int{out.Review.InputTokens, out.Review.OutputTokens}, nil
}

func printCase(w io.Writer, c Case, res domain.ReviewResult) {
	fmt.Fprintf(w, "%s (%s, %d planted)\n", c.Name, c.Language, len(c.Defects))
	for _, f := range res.Findings {
		fmt.Fprintf(w, "  %s:%d %s %s %s\n", f.File, f.Line, f.Severity, f.Category, f.Title)
	}
}

// providerLocal is the model server this command starts itself.
const providerLocal = "local"

// provider returns the model client: the LLM stand-in on a local port, a
// model server started here (local), or a real provider as the llm
// function builds it; and the client again, to ask its server its window.
func provider(ctx context.Context, o options) (llm.Provider, string, any, func(), error) {
	cfg := llm.Config{Endpoint: o.endpoint, Model: o.model, Timeout: o.timeout, Schema: result.SchemaJSON(),
		ResponseFormat: o.responseFormat, MaxTokens: o.maxTokens, Logger: slog.New(slog.DiscardHandler)}
	var stop func() error
	var window any
	switch o.provider {
	case "standin":
		srv := llmstandin.NewServer(llmstandin.Options{APIKey: o.provider})
		url, err := srv.Start("")
		if err != nil {
			return nil, "", nil, nil, err
		}
		cfg.Endpoint, cfg.Model, stop = url, "standin-reviewer-1", srv.Close
	case providerLocal:
		ms, err := devstack.StartModelServer(ctx, devstack.ModelServerOptions{})
		if err != nil {
			return nil, "", nil, nil, err
		}
		// llama-cpp-python reports no window: the one it was started with.
		cfg.Endpoint, cfg.Model, stop, window = ms.Endpoint, devstack.LocalModel, ms.Stop, staticWindow(ms.ContextTokens)
	}
	if stop != nil {
		c, err := llm.NewOpenAI(cfg, o.provider) // the API key: the stand-in's; the local server takes none
		if err != nil {
			_ = stop()
			return nil, "", nil, nil, err
		}
		return c, cfg.Model, window, func() { _ = stop() }, nil
	}
	f, ok := llm.FamilyOf(o.provider)
	switch {
	case !ok:
		return nil, "", nil, nil, fmt.Errorf("-provider %q: want standin, local, openai, anthropic or bedrock", o.provider)
	case o.model == "" || (o.endpoint == "" && !f.AWS):
		return nil, "", nil, nil, errors.New("-model (and but for an AWS provider, -endpoint) is required")
	}
	var cred llm.Credentials
	if f.AWS {
		awsCfg, err := awsconfig.LoadDefaultConfig(ctx)
		if err != nil {
			return nil, "", nil, nil, err
		}
		cred.AWS = awsCfg
	} else if cred.APIKey = os.Getenv(o.keyEnv); cred.APIKey == "" {
		return nil, "", nil, nil, fmt.Errorf("the API key is read from $%s, which is empty", o.keyEnv)
	}
	c, err := llm.New(o.provider, cfg, cred)
	if err != nil {
		return nil, "", nil, nil, err
	}
	return c, o.model, c, func() {}, nil
}

// staticWindow reports a window known from how the server was started.
type staticWindow int

func (w staticWindow) ContextTokens(context.Context) (int, string) { return int(w), "--n_ctx" }
