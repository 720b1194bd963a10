// Package settings declares every setting of an environment once: its
// cdk.json key, the variables the functions read it as and which functions
// read them, what it accepts (kind, range or choices) and the functions'
// default, where it is needed, and the placeholder values synth refuses
// outside local. Everything else comes from it: the functions' loaders read
// each variable's default and range here, through its typed handle
// (handles.go, generated; shared/config's Reader takes nothing else), synth
// checks each cdk.json value against the same row (infra/declared.go),
// refuses its placeholders outside local (infra/placeholders.go) and gives
// each function the variables of the rows whose ReadBy names it (infra's
// declaredEnv), and docs/configuration.md's "Every setting" tables and the
// handles are generated from it (go generate ./shared/settings). Tests fail
// when the docs, infra's EnvConfig or a loader disagree with it.
//
// Adding a setting: one Setting appended to Declared beside its neighbours
// in its table, then go generate ./shared/settings; the code that uses it
// reads it by its handle (r.Int(settings.MyVariable)), and the stack passes
// its cdk.json value to the functions in ReadBy, which must read it
// (internal/fnsettings; docs/development.md, Adding a setting).
package settings

//go:generate go run ../../cmd/settingsdoc -docs ../../docs/configuration.md -handles handles.go

// Table is the docs table a setting is listed in.
type Table string

// The tables of docs/configuration.md's "Every setting", in its order.
const (
	Stack   Table = "stack"
	Network Table = "network"
	Webhook Table = "webhook"
	Fetch   Table = "fetch"
	LLM     Table = "llm"
	Notify  Table = "notify"
)

// Tables lists the tables in the order the docs show them.
var Tables = []Table{Stack, Network, Webhook, Fetch, LLM, Notify}

// All in ReadBy: every function reads it (coldstart's common settings).
var All = []string{"all"}

// Setting is one row of the settings tables: one cdk.json key, or a few that
// go together (apiRateLimit and apiBurstLimit).
type Setting struct {
	Table Table
	// Keys in cdk.json `environments.<env>`; KeyNote follows them (the
	// sub-keys of an object).
	Keys    []string
	KeyNote string
	// Vars are the environment variables the functions in ReadBy (their
	// directories under functions/, or All) read it as; none: it shapes the
	// stack only. ReadNote qualifies the readers ("with swarm-comments"),
	// VarNote stands in for Vars ("(placement)").
	Vars     []string
	ReadBy   []string
	ReadNote string
	VarNote  string
	// Default is the value when cdk.json gives none, per environment where
	// they differ; Range the values accepted (and what it bounds); Needed
	// where it must be given ("" = nowhere: the default works).
	Default string
	Range   string
	Needed  string
	// Accepts is what the setting accepts (its kind, range or choices) and
	// the functions' value when its variable is unset: the loaders read
	// their variables through it and synth checks the cdk.json value
	// against it; the docs show its range before Range, which then only
	// says what the value bounds.
	Accepts Accepts
	// Required is where synth refuses the key empty (Everywhere or
	// OutsideLocal; "" = nowhere), saying Needed.
	Required Required
	// Placeholder: the values that only hold its place (an all-zero
	// checksum, a reserved example domain), refused outside local; nil = none.
	Placeholder *Placeholder
	// Sample is a real-shaped value tests and cfncheck give in place of a
	// placeholder cdk.json holds, to synthesize the checked-in environments.
	Sample any
	// StackVars: a row of variables the stack sets itself (table, queue
	// and secret names), which are not settings; Markdown. With Vars and
	// Accepts, the functions read those through the declaration too.
	StackVars string
	// Names are the variables of a StackVars row without Vars, spelt out:
	// names the stack gives (a table, a queue URL, a secret ID), with no
	// default or range, which the functions read with config.Reader's
	// Stack and StackRequired, refused for any name not listed here.
	Names []string
	// Computed: the stack computes the variables from the key (a secret's
	// ARN, the API's URL) instead of passing its value on, or sets them
	// only with another key (swarmEvents' with its enabled).
	Computed bool
}

// Required says in which environments a key must not be empty.
type Required string

// The environments a setting is required in.
const (
	Everywhere   Required = "everywhere"
	OutsideLocal Required = "outside local"
)

// Declared is every setting, in the docs' order.
var Declared = []Setting{
	{Table: Stack, Keys: []string{"account", "region"}, Default: "environment-agnostic", Needed: "optional"},
	{Table: Stack, Keys: []string{"architecture"}, Default: "`arm64`; local `x86_64` (the emulator runs bootstraps on the host)", Accepts: Enum("arm64", "arm64", "x86_64")},
	{Table: Stack, Keys: []string{"leaseSeconds"}, Vars: []string{"LEASE_SECONDS"}, ReadBy: All, Default: "60; local 10", Range: "also the stage functions' timeout and the queues' visibility timeout", Accepts: Int(60, 5, 900)},
	{Table: Stack, Keys: []string{"maxAttempts"}, Vars: []string{"MAX_ATTEMPTS"}, ReadBy: All, Default: "5", Range: "the DLQ redrive backstop is this + 3", Accepts: Int(5, 1, 20)},
	{Table: Stack, Keys: []string{"maxConcurrency.{fetch,llm,notify}"}, Default: "2 each", Range: "W: a multiple of `batchSize`, at least 2 × it"},
	{Table: Stack, Keys: []string{"batchSize"}, Default: "1", Accepts: Int(1, 1, 10)},
	{Table: Stack, Keys: []string{"clockSkewSeconds"}, Vars: []string{"CLOCK_SKEW_SECONDS"}, ReadBy: All, Default: "2", Range: "below half the lease", Accepts: Int(2, 0, 60)},
	{Table: Stack, Keys: []string{"retentionDays"}, Vars: []string{"RETENTION_DAYS"}, ReadBy: All, Default: "30", Range: "TTL of the job items, their data and history", Accepts: Int(30, 1, 30)},
	{Table: Stack, Keys: []string{"uniquenessRetentionDays"}, Vars: []string{"UNIQUENESS_RETENTION_DAYS"}, ReadBy: All, Default: "365; 0 = forever", Range: "TTL of idempotency records, changelist version gates, outbox rows and the rerun ledger's entries: [how long each promise holds](guarantees.md#how-long-each-promise-holds)", Accepts: IntOrZero(365, 365, 36500)},
	{Table: Stack, Keys: []string{"logLevel"}, Vars: []string{"LOG_LEVEL"}, ReadBy: All, Default: "`info`; local and dev `debug`", Accepts: Enum("info", "debug", "info", "warn", "error")},
	{Table: Stack, Keys: []string{"logRetentionDays"}, Default: "30; local 1, dev 14, prod 90", Range: "a CloudWatch Logs value"},
	{Table: Stack, Keys: []string{"accessLogRetentionDays"}, Default: "365", Range: "S3 access logs; not in local", Accepts: Int(365, 1, 36500)},
	{Table: Stack, Keys: []string{"sweepSchedule"}, Default: "`rate(1 minute)`", Accepts: Str("rate(1 minute)")},
	{Table: Stack, Keys: []string{"alarmTopicArn"}, Default: "the stack creates `AlarmTopic`", Needed: "optional"},
	{Table: Stack, Keys: []string{"alarmEmail"}, Default: "none", Needed: "recommended outside local", Placeholder: ExampleDomain, Sample: "oncall@studio.test"},
	{Table: Stack, Keys: []string{"operatorRoleArn"}, Default: "none", Needed: "optional: the one role besides fetch allowed to read raw artifacts"},
	{Table: Stack, Keys: []string{"rawBucketDataEvents"}, Default: "false", Needed: "optional: CloudTrail S3 data events for the raw bucket"},
	{Table: Stack, Keys: []string{"apiRateLimit", "apiBurstLimit"}, Default: "50 / 100 requests per second", Range: "API Gateway stage throttling", Accepts: IntAtLeast(50, 1)},
	{Table: Stack, StackVars: "`CRITICIZER_ENV`, `JOBS_TABLE`, `<STAGE>_QUEUE_URL`, `<STAGE>_DLQ_URL`, `RAW_BUCKET`, `REDACTED_BUCKET`",
		Names: []string{"CRITICIZER_ENV", "JOBS_TABLE", "FETCH_QUEUE_URL", "LLM_QUEUE_URL", "NOTIFY_QUEUE_URL", "FETCH_DLQ_URL", "LLM_DLQ_URL", "NOTIFY_DLQ_URL", "RAW_BUCKET", "REDACTED_BUCKET"}},
	{Table: Network, Keys: []string{"vpc"}, KeyNote: "(`vpcId`, `subnetIds`, `securityGroupIds`, `createEndpoints`, `routeTableIds`, `allFunctions`)", Default: "none: functions outside a VPC", Needed: "a Perforce server on a private network; refused in local"},
	{Table: Network, Keys: []string{"apiGatewayCloudWatchRole"}, Default: "`create` outside local, `existing` in local", Needed: "one environment per account creates it; the others say `existing`", Accepts: Str("create")},
	{Table: Network, Keys: []string{"kmsKey"}, Default: "empty: AWS-managed keys", Needed: "optional: `create` (prod as checked in) or a key ARN"},
	{Table: Network, Keys: []string{"sesIdentity"}, Default: "the domain of `smtpFrom`", Needed: "with `ses`, when sending as another verified identity"},
	{Table: Webhook, Keys: []string{"replayWindowSeconds"}, Vars: []string{"REPLAY_WINDOW_SECONDS"}, ReadBy: []string{"webhook"}, Default: "300", Accepts: Int(300, 30, 3600)},
	{Table: Webhook, Keys: []string{"recipientDomains"}, Vars: []string{"RECIPIENT_DOMAINS"}, ReadBy: []string{"webhook", "fetch", "notify", "digest"}, Default: "none", Needed: "every environment but local: the e-mail domains that may receive code ([who may receive code](api.md#who-may-receive-code))", Placeholder: ExampleDomain, Sample: []string{"studio.test", "*.corp.studio.test"}, Required: OutsideLocal},
	{Table: Webhook, Keys: []string{"maxRecipients"}, Vars: []string{"MAX_RECIPIENTS"}, ReadBy: []string{"webhook", "fetch", "notify", "digest"}, Default: "10", Range: "per request", Accepts: Int(10, 1, 50)},
	{Table: Webhook, Keys: []string{"jobPage"}, Vars: []string{"JOB_PAGE_SECRET_ID"}, ReadBy: []string{"webhook", "llm", "jobpage"}, Computed: true, Default: "false", Needed: "optional: the read-only job page ([jobpage.md](jobpage.md))"},
	{Table: Webhook, Keys: []string{"publicBaseUrl"}, Vars: []string{"JOB_PAGE_BASE_URL"}, ReadBy: []string{"llm", "webhook"}, Computed: true, Default: "the API's URL", Needed: "optional, with `jobPage`: the links' base behind a custom domain"},
	{Table: Webhook, Keys: []string{"swarmUrl"}, Vars: []string{"SWARM_URL"}, ReadBy: []string{"webhook", "fetch", "llm", "notify", "sweeper", "doctor"}, Default: "none: Swarm off", Needed: "with Swarm; creates the two Swarm secrets"},
	{Table: Webhook, Keys: []string{"swarmEvents"}, KeyNote: "(`enabled`, `signatureHeader`, `deliveryHeader`, `eventHeader`, `timestampHeader`, `toleranceSeconds`)", VarNote: "(below)", Default: "off; `X-Swarm-Signature`, `X-Swarm-Delivery`, `X-Swarm-Event`, no timestamp, 300", Range: "tolerance 30–3600 s; header names *unverified*: use the ones your P4 Code Review documents", Needed: "optional, needs `swarmUrl`: receive P4 Code Review's signed webhooks on `POST /webhooks/swarm-events`; the stack creates the secret (`SWARM_EVENTS_SECRET_ID`, output `SwarmEventsSecretArn`) ([operating.md](operating.md#receiving-p4-code-review-webhooks))"},
	{Table: Webhook, StackVars: "`SWARM_EVENTS_SIGNATURE_HEADER` (webhook, with `swarmEvents`: its `signatureHeader`)", Keys: []string{"swarmEvents.signatureHeader"}, Computed: true, Vars: []string{"SWARM_EVENTS_SIGNATURE_HEADER"}, ReadBy: []string{"webhook"}, Accepts: Str("X-Swarm-Signature")},
	{Table: Webhook, StackVars: "`SWARM_EVENTS_DELIVERY_HEADER` (webhook, with `swarmEvents`: its `deliveryHeader`)", Keys: []string{"swarmEvents.deliveryHeader"}, Computed: true, Vars: []string{"SWARM_EVENTS_DELIVERY_HEADER"}, ReadBy: []string{"webhook"}, Accepts: Str("X-Swarm-Delivery")},
	{Table: Webhook, StackVars: "`SWARM_EVENTS_EVENT_HEADER` (webhook, with `swarmEvents`: its `eventHeader`)", Keys: []string{"swarmEvents.eventHeader"}, Computed: true, Vars: []string{"SWARM_EVENTS_EVENT_HEADER"}, ReadBy: []string{"webhook"}, Accepts: Str("X-Swarm-Event")},
	{Table: Webhook, StackVars: "`SWARM_EVENTS_TIMESTAMP_HEADER` (webhook, with `swarmEvents`: its `timestampHeader`; none: no timestamp check)", Keys: []string{"swarmEvents.timestampHeader"}, Computed: true, Vars: []string{"SWARM_EVENTS_TIMESTAMP_HEADER"}, ReadBy: []string{"webhook"}},
	{Table: Webhook, StackVars: "`SWARM_EVENTS_TOLERANCE_SECONDS` (webhook, with `swarmEvents`: its `toleranceSeconds`)", Keys: []string{"swarmEvents.toleranceSeconds"}, Computed: true, Vars: []string{"SWARM_EVENTS_TOLERANCE_SECONDS"}, ReadBy: []string{"webhook"}, Accepts: Int(300, 30, 3600)},
	{Table: Webhook, StackVars: "`SWARM_EVENTS_SECRET_ID` (webhook, with `swarmEvents`: the secret P4 Code Review signs its webhooks with)", Vars: []string{"SWARM_EVENTS_SECRET_ID"}, ReadBy: []string{"webhook"}},
	{Table: Webhook, StackVars: "`WEBHOOK_SECRET_ID`; with `swarmUrl`, `SWARM_TOKEN_SECRET_ID` and, unless Swarm is private, `SWARM_API_SECRET_ID` (webhook: a run is held to its review with 422)", Names: []string{"WEBHOOK_SECRET_ID", "SWARM_TOKEN_SECRET_ID", "SWARM_API_SECRET_ID"}},
	{Table: Fetch, Keys: []string{"depotAllowList"}, Vars: []string{"DEPOT_ALLOWLIST"}, ReadBy: []string{"fetch", "doctor"}, Default: "none", Needed: "every environment: the depot paths fetch may read (`//depot/projectA/...`)", Required: Everywhere},
	{Table: Fetch, Keys: []string{"p4Port"}, Vars: []string{"P4PORT"}, ReadBy: []string{"fetch", "doctor"}, Default: "none; local the stand-in", Needed: "every environment", Placeholder: ExampleDomain, Sample: "ssl:perforce.studio.test:1666", Required: Everywhere},
	{Table: Fetch, Keys: []string{"p4User"}, Vars: []string{"P4USER"}, ReadBy: []string{"fetch", "doctor"}, Default: "`criticizer`", Required: Everywhere},
	{Table: Fetch, Keys: []string{"p4Bin"}, Vars: []string{"P4_BIN"}, ReadBy: []string{"fetch", "doctor"}, Default: "`/opt/bin/p4` (the layer)", Required: Everywhere},
	{Table: Fetch, Keys: []string{"p4LayerPath"}, Default: "none", Needed: "every non-local environment: the p4 layer, staged in `build/p4-layer` by `make p4-layer P4=/path/to/p4 P4_SHA256=…`, with its checksum in `p4LayerSha256`", Required: OutsideLocal},
	{Table: Fetch, Keys: []string{"p4LayerSha256"}, Default: "none", Needed: "with `p4LayerPath`: the SHA-256 of the p4 client this environment runs; synth refuses a layer built from any other", Placeholder: AllZero},
	{Table: Fetch, Keys: []string{"p4ServerRole"}, Vars: []string{"P4_SERVER_ROLE"}, ReadBy: []string{"fetch", "doctor"}, Default: "`standard`; local `commit`", Needed: "`commit` or `edge` in a commit-edge installation: an unpromoted edge shelf is `SHELF_NOT_PROMOTED`", Accepts: Enum("standard", "standard", "commit", "edge")},
	{Table: Fetch, Keys: []string{"p4TimeoutSeconds"}, Vars: []string{"P4_TIMEOUT_SECONDS"}, ReadBy: []string{"fetch", "doctor"}, Default: "30; local 8", Range: "below the lease", Accepts: Int(30, 1, 900)},
	{Table: Fetch, Keys: []string{"p4TrustFingerprint"}, Vars: []string{"P4TRUST_FINGERPRINT"}, ReadBy: []string{"fetch", "doctor"}, Default: "none", Needed: "`ssl:` ports (synth fails without it)", Placeholder: AllZero, Sample: "AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89:AB:CD:EF:01"},
	{Table: Fetch, Keys: []string{"p4Charset"}, Vars: []string{"P4CHARSET"}, ReadBy: []string{"fetch", "doctor"}, Default: "unset", Needed: "non-unicode servers with non-UTF-8 files (`iso8859-1`), unicode-mode servers (`utf8`)"},
	{Table: Fetch, Keys: []string{"p4Parallelism"}, Vars: []string{"P4_PARALLELISM"}, ReadBy: []string{"fetch", "doctor"}, Default: "4", Range: "p4 processes per job", Accepts: Int(4, 1, 32)},
	{Table: Fetch, Keys: []string{"p4MaxFileBytes"}, Vars: []string{"P4_MAX_FILE_BYTES"}, ReadBy: []string{"fetch", "doctor"}, Default: "2,097,152 (2 MiB)", Range: "bytes of one file's content; a larger file is listed, not fetched, and the review names it \"larger than the per-file limit (p4MaxFileBytes)\"", Accepts: Int(2<<20, 64<<10, 16<<20)},
	{Table: Fetch, Keys: []string{"redactEmails"}, Vars: []string{"REDACT_EMAILS"}, ReadBy: []string{"fetch", "llm"}, Default: "true", Accepts: Bool(true)},
	{Table: Fetch, Keys: []string{"confidentialDomains"}, Vars: []string{"CONFIDENTIAL_DOMAINS"}, ReadBy: []string{"fetch", "llm"}, Default: "none", Needed: "optional: hosts under these domains are redacted"},
	{Table: Fetch, Keys: []string{"confidentialCidrs"}, Vars: []string{"CONFIDENTIAL_CIDRS"}, ReadBy: []string{"fetch", "llm"}, Default: "none", Needed: "optional: addresses in these ranges are redacted"},
	{Table: Fetch, StackVars: "`P4_SECRET_ID`; with `swarmUrl`, `SWARM_API_SECRET_ID` (fetch)", Names: []string{"P4_SECRET_ID"}},
	{Table: LLM, Keys: []string{"llmProvider"}, Vars: []string{"LLM_PROVIDER"}, ReadBy: []string{"llm", "doctor"}, Default: "`openai`; dev, staging and prod as checked in use `bedrock`", Range: "[choosing one](network-and-iam.md#the-llm-provider)", Accepts: Enum("openai", "openai", "anthropic", "bedrock")},
	{Table: LLM, Keys: []string{"llmEndpoint"}, Vars: []string{"LLM_ENDPOINT"}, ReadBy: []string{"llm", "doctor"}, Default: "none; local the stand-in", Needed: "openai and anthropic: the base URL, no path (`https://api.openai.com`); bedrock: optional VPC endpoint"},
	{Table: LLM, Keys: []string{"llmModel"}, Vars: []string{"LLM_MODEL"}, ReadBy: []string{"llm", "doctor"}, Default: "`gpt-4o-mini`", Range: "with bedrock, a Bedrock model ID enabled in the region", Required: Everywhere},
	{Table: LLM, Keys: []string{"llmTimeoutSeconds"}, Vars: []string{"LLM_TIMEOUT_SECONDS"}, ReadBy: []string{"llm", "doctor"}, Default: "45; local 8", Range: "below the lease", Accepts: Int(45, 1, 900)},
	{Table: LLM, Keys: []string{"reviewTimeoutSeconds"}, Vars: []string{"QUEUE_VISIBILITY_SECONDS"}, ReadBy: []string{"llm"}, Default: "900; local 30", Range: "at least leaseSeconds: the llm function's timeout and the llm queue's visibility", Accepts: Int(0, 0, 900)},
	{Table: LLM, Keys: []string{"llmRequestsPerMinute"}, Vars: []string{"LLM_REQUESTS_PER_MINUTE"}, ReadBy: []string{"llm"}, Default: "0: learnt from the provider's rate-limit headers", Needed: "bedrock (which sends none: Service Quotas shows them)", Accepts: Int(0, 0, 1_000_000_000)},
	{Table: LLM, Keys: []string{"llmTokensPerMinute"}, Vars: []string{"LLM_TOKENS_PER_MINUTE"}, ReadBy: []string{"llm"}, Default: "0: learnt from the provider's rate-limit headers", Range: "a call reserves its output budget against it: a smaller limit could not admit one chunk", Needed: "bedrock (which sends none: Service Quotas shows them); shared by every concurrent review (a per-minute budget item in the jobs table)", Accepts: IntOrZero(0, 10_000, 1_000_000_000)},
	{Table: LLM, Keys: []string{"llmPricesPerMTok"}, Vars: []string{"LLM_PRICES_PER_MTOK"}, ReadBy: []string{"llm"}, Default: "empty: no cost estimate", Needed: "the model's list prices, `input=3,cached_input=0.3,cache_write=3.75,output=15` (USD per million tokens): each review records its estimated cost (`estimated_cost_usd` in the result's meta), shown in the e-mail beside its tokens; see [benchmarks.md](benchmarks.md#monthly-cost)"},
	{Table: LLM, Keys: []string{"promptPatchDrift"}, Vars: []string{"PROMPT_PATCH_DRIFT"}, ReadBy: []string{"llm"}, Default: "false", Needed: "optional: accept an answer whose `prompt_version` differs only in its patch (RC-4)", Accepts: Bool(false)},
	{Table: LLM, Keys: []string{"validFindingsSlo"}, Default: "outside local: `{\"1.0.0\": 0.1}`", Needed: "required outside local for every served prompt version (stable and candidate): minimum average valid findings per job; below it for an hour `ValidFindingsSloAlarm…` pages; `criticizer promote` judges by it"},
	{Table: LLM, Keys: []string{"droppedFindingsSlo"}, Default: "outside local: `{\"1.0.0\": 0.5}`", Needed: "required outside local for every served prompt version: maximum average dropped findings per job; above it for an hour `DroppedFindingsSloAlarm…` pages; `criticizer promote` judges by it"},
	{Table: LLM, Keys: []string{"promptCandidateVersion"}, Vars: []string{"PROMPT_CANDIDATE_VERSION"}, ReadBy: []string{"llm"}, Default: "none", Needed: "with a canary: a prompt version this build has a template for (`1.1.0`, `1.2.0`; shared/result's prompt versions)"},
	{Table: LLM, Keys: []string{"promptCandidatePercent"}, Vars: []string{"PROMPT_CANDIDATE_PERCENT"}, ReadBy: []string{"llm"}, Default: "0", Needed: "with a canary: the percentage of jobs; 0 rolls back", Accepts: Int(0, 0, 100)},
	{Table: LLM, Keys: []string{"llmModelCandidate"}, Vars: []string{"LLM_MODEL_CANDIDATE"}, ReadBy: []string{"llm"}, Default: "none", Needed: "with a model canary: the model on trial, at the same provider, key (or Bedrock role) and endpoint as `llmModel`; `criticizer promote --model` judges it"},
	{Table: LLM, Keys: []string{"llmModelCandidatePercent"}, Vars: []string{"LLM_MODEL_CANDIDATE_PERCENT"}, ReadBy: []string{"llm"}, Default: "0", Needed: "with a model canary: the percentage of jobs, drawn independently of `promptCandidatePercent`; 0 rolls back", Accepts: Int(0, 0, 100)},
	{Table: LLM, Keys: []string{"llmModelCandidatePricesPerMTok"}, Vars: []string{"LLM_MODEL_CANDIDATE_PRICES_PER_MTOK"}, ReadBy: []string{"llm"}, Default: "empty: the candidate's reviews have no cost estimate", Needed: "with a model canary: the candidate's list prices, in `llmPricesPerMTok`'s format; `criticizer promote --model` moves them into `llmPricesPerMTok`"},
	{Table: LLM, Keys: []string{"llmModelCandidateRequestsPerMinute"}, Vars: []string{"LLM_MODEL_CANDIDATE_REQUESTS_PER_MINUTE"}, ReadBy: []string{"llm"}, Default: "0: `llmRequestsPerMinute`'s", Needed: "with a model canary whose limits differ from `llmModel`'s: providers set them per model ([llm-providers.md](reference/llm-providers.md#rate-limit-headers)); `criticizer promote --model` moves it into `llmRequestsPerMinute`", Accepts: Int(0, 0, 1_000_000_000)},
	{Table: LLM, Keys: []string{"llmModelCandidateTokensPerMinute"}, Vars: []string{"LLM_MODEL_CANDIDATE_TOKENS_PER_MINUTE"}, ReadBy: []string{"llm"}, Default: "0: `llmTokensPerMinute`'s", Range: "as `llmTokensPerMinute`", Needed: "with a model canary whose limits differ from `llmModel`'s (a budget item of its own in the jobs table); `criticizer promote --model` moves it into `llmTokensPerMinute`", Accepts: IntOrZero(0, 10_000, 1_000_000_000)},
	{Table: LLM, Keys: []string{"llmMaxOutputTokens"}, Vars: []string{"LLM_MAX_OUTPUT_TOKENS"}, ReadBy: []string{"llm", "doctor"}, Default: "4096", Accepts: Int(4096, 256, 1<<20)},
	{Table: LLM, Keys: []string{"llmResponseFormat"}, Vars: []string{"LLM_RESPONSE_FORMAT"}, ReadBy: []string{"llm", "doctor"}, Default: "`auto`: the best form the server accepts, found on the first calls", Needed: "openai only; `json_schema`, `json_object_schema` (llama.cpp's schema field) or `json_object` (schema only in the prompt) to pin one", Accepts: Enum("auto", "auto", "json_schema", "json_object_schema", "json_object")},
	{Table: LLM, Keys: []string{"llmContextTokens"}, Vars: []string{"LLM_CONTEXT_TOKENS"}, ReadBy: []string{"llm", "doctor"}, Default: "what the server reports (vLLM `max_model_len`, llama-server `/props`), else by model family (`shared/result/chunk.go`)", Needed: "servers that report none (Ollama, llama-cpp-python): their configured context (`num_ctx`, `--n_ctx`)", Accepts: Int(0, 0, 10_000_000)},
	{Table: LLM, Keys: []string{"llmBytesPerToken"}, Vars: []string{"LLM_BYTES_PER_TOKEN"}, ReadBy: []string{"llm"}, Default: "by model family", Accepts: Float(0, 1, 16)},
	{Table: LLM, Keys: []string{"llmParallelism"}, Vars: []string{"LLM_PARALLELISM"}, ReadBy: []string{"llm"}, Default: "4", Range: "chunks at once", Accepts: Int(4, 1, 64)},
	{Table: LLM, Keys: []string{"reviewMaxFiles"}, Vars: []string{"REVIEW_MAX_FILES"}, ReadBy: []string{"llm"}, Default: "5,000", Range: "files reviewed per changelist", Accepts: Int(0, 0, 1_000_000)},
	{Table: LLM, Keys: []string{"reviewMaxBytes"}, Vars: []string{"REVIEW_MAX_BYTES"}, ReadBy: []string{"llm"}, Default: "64 MiB", Range: "diff bytes per changelist", Accepts: Int(0, 0, 1<<30)},
	{Table: LLM, Keys: []string{"reviewMaxFileBytes"}, Vars: []string{"REVIEW_MAX_FILE_BYTES"}, ReadBy: []string{"llm"}, Default: "256 KiB", Range: "diff bytes per file", Accepts: Int(0, 0, 1<<30)},
	{Table: LLM, Keys: []string{"reviewMaxChunkFiles"}, Vars: []string{"REVIEW_MAX_CHUNK_FILES"}, ReadBy: []string{"llm"}, Default: "100", Range: "files per model call", Accepts: Int(0, 0, 10_000)},
	{Table: LLM, Keys: []string{"reviewMaxTokens"}, Vars: []string{"REVIEW_MAX_TOKENS"}, ReadBy: []string{"llm"}, Default: "0: unbounded", Needed: "optional: one review's token budget; files past it are skipped `over_budget`", Accepts: Int(0, 0, 100_000_000)},
	{Table: LLM, Keys: []string{"dailyTokenBudget"}, Vars: []string{"REVIEW_DAILY_TOKEN_BUDGET"}, ReadBy: []string{"llm"}, Default: "0: unbounded", Needed: "optional: the environment's model tokens per UTC day; `DailyTokenBudgetAlarm` at 80 %", Accepts: Int(0, 0, 1_000_000_000_000)},
	{Table: LLM, Keys: []string{"reviewRules"}, Vars: []string{"REVIEW_RULES"}, ReadBy: []string{"llm"}, Default: "none", Needed: "optional: the environment's default review rules, in the schema of the depot's `.criticizer.yaml` ([design.md](design.md#reviews-developers-can-trust))"},
	{Table: LLM, Keys: []string{"acceptanceAlarmThreshold"}, Default: "0.3", Range: "0: off", Needed: "the share of judged findings reviewers accepted (addressed, verified, resolved, liked vs disliked, dismissed, archived) below which, over a day, `AcceptanceAlarm` pages; tune it to the team's normal from `criticizer outcomes report`", Accepts: FloatBelow(0.3, 0, 1)},
	{Table: LLM, Keys: []string{"acceptanceAlarmMinSample"}, Default: "20", Needed: "the fewest findings judged in a day for which `AcceptanceAlarm` judges acceptance: a day with fewer does not page (one dismissed finding is not a trend)", Accepts: IntAtLeast(20, 1)},
	{Table: LLM, Keys: []string{"acceptanceMargin"}, Default: "0.05", Needed: "`criticizer promote` refuses a candidate prompt whose canary acceptance is below the stable version's by more than the margin", Accepts: FloatBelow(0.05, 0, 1)},
	{Table: LLM, Keys: []string{"acceptanceMinSample"}, Default: "30", Range: "0: not judged, for a deployment that posts no Swarm comments (no reactions)", Needed: "`criticizer promote` refuses a candidate prompt that has fewer judged findings than this", Accepts: IntAtLeast(30, 0)},
	{Table: LLM, StackVars: "`LLM_SECRET_ID` (llm; not with bedrock, which uses the function's role)", Names: []string{"LLM_SECRET_ID"}},
	{Table: Notify, Keys: []string{"emailProvider"}, Vars: []string{"EMAIL_PROVIDER"}, ReadBy: []string{"notify", "sweeper", "digest", "doctor"}, Default: "`smtp`", Range: "dev, staging and prod use `ses`", Accepts: Enum("smtp", "smtp", "ses")},
	{Table: Notify, Keys: []string{"smtpFrom"}, Vars: []string{"SMTP_FROM"}, ReadBy: []string{"notify", "sweeper", "digest", "doctor"}, Default: "`criticizer@example.com`", Needed: "every environment: the From address (its domain is in every Message-ID)", Placeholder: ExampleDomain, Sample: "criticizer@studio.test", Required: Everywhere},
	{Table: Notify, Keys: []string{"sesConfigurationSet"}, Vars: []string{"SES_CONFIGURATION_SET"}, ReadBy: []string{"notify", "digest"}, Default: "none", Needed: "`ses`: the stack creates it and routes its events to `sesevents`"},
	{Table: Notify, Keys: []string{"smtpHost"}, Vars: []string{"SMTP_HOST"}, ReadBy: []string{"notify", "digest", "doctor"}, Default: "none", Needed: "`smtp`"},
	{Table: Notify, Keys: []string{"smtpPort"}, Vars: []string{"SMTP_PORT"}, ReadBy: []string{"notify", "digest", "doctor"}, Default: "587", Accepts: Int(587, 1, 65535)},
	{Table: Notify, Keys: []string{"smtpTLS"}, Vars: []string{"SMTP_TLS"}, ReadBy: []string{"notify", "digest", "doctor"}, Default: "`starttls`", Accepts: Enum("starttls", "starttls", "tls", "none")},
	{Table: Notify, Keys: []string{"smtpTimeoutSeconds"}, Vars: []string{"SMTP_TIMEOUT_SECONDS"}, ReadBy: []string{"notify", "digest", "doctor"}, Default: "10; local 3", Range: "3 × it must stay below the lease", Accepts: Int(10, 1, 300)},
	{Table: Notify, Keys: []string{"smtpLookupUrl"}, Vars: []string{"SMTP_LOOKUP_URL"}, ReadBy: []string{"notify", "sweeper", "digest"}, Default: "none", Needed: "recommended with `smtp`: the relay's message lookup; without it an uncertain send becomes `DELIVERY_UNCONFIRMED`"},
	{Table: Notify, Keys: []string{"sendCompletionWindowSeconds"}, Vars: []string{"SEND_COMPLETION_WINDOW_SECONDS"}, ReadBy: []string{"notify", "sweeper", "digest"}, Default: "0 = the provider's: 5 min SMTP, 15 min SES; local 60", Range: "more than 3 × `smtpTimeoutSeconds`", Accepts: Int(0, 0, 86400)},
	{Table: Notify, Keys: []string{"notifyChannels"}, Vars: []string{"NOTIFY_CHANNELS"}, ReadBy: []string{"notify"}, Default: "`[\"email\"]`", Needed: "optional: `[\"email\", \"swarm-comments\"]` also posts findings as comments on the job's Swarm review (needs `swarmUrl`; [perforce-and-swarm.md](perforce-and-swarm.md#findings-as-review-comments))", Accepts: Str("email")},
	{Table: Notify, Keys: []string{"swarmCommentWindowSeconds"}, Vars: []string{"SWARM_COMMENT_WINDOW_SECONDS"}, ReadBy: []string{"notify", "sweeper"}, ReadNote: "with swarm-comments", Default: "0 = 120", Range: "more than 3 × the Swarm client's 10 s timeout: longer than a create Swarm may still be storing", Accepts: Int(120, 31, 3600)},
	{Table: Notify, Keys: []string{"swarmMaxInlineComments"}, Vars: []string{"SWARM_MAX_INLINE_COMMENTS"}, ReadBy: []string{"notify"}, ReadNote: "with swarm-comments", Default: "0 = 50", Range: "finding comments per review version; past it the least severe are left out first and listed, by title and file:line, in the summary comment", Accepts: Int(50, 1, 500)},
	{Table: Notify, Keys: []string{"swarmEmailParticipants"}, Vars: []string{"SWARM_EMAIL_PARTICIPANTS"}, ReadBy: []string{"notify"}, ReadNote: "with swarm-comments", Default: "false", Range: "true also e-mails a Swarm review's participants the findings Swarm already tells them of", Accepts: Bool(false)},
	{Table: Notify, Keys: []string{"swarmGateSeverity"}, Vars: []string{"SWARM_GATE_SEVERITY"}, ReadBy: []string{"llm", "sweeper", "webhook", "digest", "jobpage"},
		ReadNote: "the noise filter never withholds a finding at or above it (high when off)", Default: "off", Needed: "optional, needs `swarmUrl`: findings at or above it fail the review's Swarm test run; a rules file's `gate_severity` overrides it for its path", Accepts: Str("off")},
	{Table: Notify, Keys: []string{"swarmPrivate"}, VarNote: "(placement)", Default: "false", Needed: "a Swarm reachable only inside the studio's network (also inferred from a private host in `swarmUrl`): fetch, llm, notify and the sweeper run in `vpc`, which must be set"},
	{Table: Notify, StackVars: "`SMTP_SECRET_ID` (notify and digest, with `smtp`); `DELIVERY_KEY_SECRET_ID` (notify, sweeper, digest: the key of the recipient hash and the e-mail token, generated by the stack, never rotated)", Names: []string{"SMTP_SECRET_ID", "DELIVERY_KEY_SECRET_ID"}},
	{Table: Notify, StackVars: "`RAW_ARTIFACT_TTL_DAYS` (sweeper: the raw bucket's lifecycle, days)", Vars: []string{"RAW_ARTIFACT_TTL_DAYS"}, ReadBy: []string{"sweeper"}, Accepts: Int(7, 1, 3650)},
	{Table: Notify, StackVars: "`REDACTED_ARTIFACT_TTL_DAYS` (sweeper: the redacted bucket's lifecycle, days)", Vars: []string{"REDACTED_ARTIFACT_TTL_DAYS"}, ReadBy: []string{"sweeper"}, Accepts: Int(30, 1, 3650)},
	{Table: Notify, Keys: []string{"dismissThreshold"}, Vars: []string{"DISMISS_THRESHOLD"}, ReadBy: []string{"llm", "sweeper", "webhook", "digest", "jobpage"}, Default: "3", Range: "dismissals by people with a say on their review (the change author, its participants and branch moderators, `dismissDeciders`), with no acceptance, after which a finding kind is withheld under its depot path scope; a review rules file's `dismissal_suppression.after` overrides it for its paths (0 there: never)", Accepts: Int(3, 1, 100)},
	{Table: Notify, Keys: []string{"dismissScopeDepth"}, Vars: []string{"DISMISS_SCOPE_DEPTH"}, ReadBy: []string{"llm", "sweeper", "webhook", "digest", "jobpage"}, Default: "1 (`//depot/<first dir>/...`)", Range: "directories below the depot; applies to findings posted after a change", Accepts: Int(1, 1, 5)},
	{Table: Notify, Keys: []string{"weeklyDigest"}, Vars: []string{"WEEKLY_DIGEST"}, ReadBy: []string{"llm"}, Default: "false", Needed: "optional: the weekly digest e-mail to the depot path owners who opted in; the llm stage records each review's week entry when it decides it, and the stack adds the digest function and its weekly schedule ([operating.md](operating.md#weekly-digest))", Accepts: Bool(false)},
	{Table: Notify, Keys: []string{"digestOwners"}, Vars: []string{"DIGEST_OWNERS"}, ReadBy: []string{"digest"}, Default: "none", Needed: "with `weeklyDigest`: who owns which depot paths, a pattern → addresses (`{\"//depot/engine/...\": [\"lead@studio.test\"]}`)"},
	{Table: Notify, Keys: []string{"digestOptIn"}, Vars: []string{"DIGEST_OPT_IN"}, ReadBy: []string{"digest"}, Default: "none: nobody", Needed: "with `weeklyDigest`: the owners who receive it; an owner not listed gets nothing"},
	{Table: Notify, Keys: []string{"digestSchedule"}, Default: "`cron(0 6 ? * MON *)`", Range: "an EventBridge schedule; each run digests the ISO week before the one it fires in", Accepts: Str("cron(0 6 ? * MON *)")},
	{Table: Notify, Keys: []string{"dismissMinPeople"}, Vars: []string{"DISMISS_MIN_PEOPLE"}, ReadBy: []string{"llm", "sweeper", "webhook", "digest", "jobpage"}, Default: "2", Range: "distinct people with a say whose dismissals a kind needs before it is withheld: one person never silences a kind", Accepts: Int(2, 1, 20)},
	{Table: Notify, Keys: []string{"dismissMinReviews"}, Vars: []string{"DISMISS_MIN_REVIEWS"}, ReadBy: []string{"llm", "sweeper", "webhook", "digest", "jobpage"}, Default: "2", Range: "distinct reviews those dismissals must span", Accepts: Int(2, 1, 20)},
	{Table: Notify, Keys: []string{"dismissDeciders"}, Vars: []string{"DISMISS_DECIDERS"}, ReadBy: []string{"llm", "sweeper", "webhook", "digest", "jobpage"}, Default: "none", Needed: "optional: logins, and groups as swarm-group-<name> (their members, subgroups too), comma-separated, whose dismissals count on every review besides its author, participants (as first fetched: not whoever joined by commenting) and branch moderators (leads, QA)"},
	{Table: Notify, Keys: []string{"dismissBotLogins"}, Vars: []string{"DISMISS_BOT_LOGINS"}, ReadBy: []string{"llm", "sweeper", "webhook", "digest", "jobpage"}, Default: "none", Needed: "optional: logins of other bots (comma-separated) whose replies never count toward withholding; the service's own never do"},
	{Table: Notify, Keys: []string{"dismissConfirm"}, Vars: []string{"DISMISS_CONFIRM"}, ReadBy: []string{"llm", "sweeper", "webhook", "digest", "jobpage"}, Default: "false", Range: "true: a new suppression waits for `criticizer outcomes confirm` instead of applying at once", Accepts: Bool(false)},
}
