// Package settings declares every setting of an environment once: its
// cdk.json key, the variables the functions read it as and which functions
// read them, its default, its range, where it is needed, and the placeholder
// values synth refuses outside local. docs/configuration.md's "Every setting"
// tables are generated from it (go generate ./internal/settings), the infra
// synth refuses its placeholders (infra/validate.go), and tests fail when the
// docs, infra's EnvConfig or a function's loader disagree with it.
//
// Adding a setting: one Setting in Declared (beside its neighbours in its
// table), the field in infra's EnvConfig with the same JSON key, the code that
// reads it; then go generate ./internal/settings.
package settings

//go:generate go run ../../cmd/settingsdoc -docs ../../docs/configuration.md

// Table is the docs table a setting is listed in.
type Table string

// The tables of docs/configuration.md's "Every setting", in its order.
const (
	Stack   Table = "stack"
	Network Table = "network"
	Webhook Table = "webhook"
	Fetch   Table = "fetch"
	Review  Table = "review"
	Notify  Table = "notify"
)

// Tables lists the tables in the order the docs show them.
var Tables = []Table{Stack, Network, Webhook, Fetch, Review, Notify}

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
	// Placeholder: the values that only hold its place (an all-zero
	// checksum, a reserved example domain), refused outside local; nil = none.
	Placeholder *Placeholder
	// Sample is a real-shaped value tests and cfncheck give in place of a
	// placeholder cdk.json holds, to synthesize the checked-in environments.
	Sample any
	// StackVars: a row of variables the stack sets itself (table, queue
	// and secret names), which are not settings; Markdown.
	StackVars string
}

// Declared is every setting, in the docs' order.
var Declared = []Setting{
	{Table: Stack, Keys: []string{"account", "region"}, Default: "environment-agnostic", Needed: "optional"},
	{Table: Stack, Keys: []string{"architecture"}, Default: "`arm64`; local `x86_64` (the emulator runs bootstraps on the host)"},
	{Table: Stack, Keys: []string{"leaseSeconds"}, Vars: []string{"LEASE_SECONDS"}, ReadBy: All, Default: "60; local 10", Range: "1–900; also the stage functions' timeout and the queues' visibility timeout"},
	{Table: Stack, Keys: []string{"maxAttempts"}, Vars: []string{"MAX_ATTEMPTS"}, ReadBy: All, Default: "5", Range: "the DLQ redrive backstop is this + 3"},
	{Table: Stack, Keys: []string{"maxConcurrency.{fetch,llm,notify}"}, Default: "2 each", Range: "W: a multiple of `batchSize`, at least 2 × it"},
	{Table: Stack, Keys: []string{"batchSize"}, Default: "1", Range: "1–10"},
	{Table: Stack, Keys: []string{"clockSkewSeconds"}, Vars: []string{"CLOCK_SKEW_SECONDS"}, ReadBy: All, Default: "2", Range: "below half the lease"},
	{Table: Stack, Keys: []string{"retentionDays"}, Vars: []string{"RETENTION_DAYS"}, ReadBy: All, Default: "30", Range: "1–30: TTL of the job items, their data and history"},
	{Table: Stack, Keys: []string{"uniquenessRetentionDays"}, Vars: []string{"UNIQUENESS_RETENTION_DAYS"}, ReadBy: All, Default: "365; 0 = forever", Range: "TTL of idempotency records, changelist version gates, outbox rows and the rerun ledger's entries: [how long each promise holds](guarantees.md#how-long-each-promise-holds)"},
	{Table: Stack, Keys: []string{"logLevel"}, Vars: []string{"LOG_LEVEL"}, ReadBy: All, Default: "`info`; local and dev `debug`"},
	{Table: Stack, Keys: []string{"logRetentionDays"}, Default: "30; local 1, dev 14, prod 90", Range: "a CloudWatch Logs value"},
	{Table: Stack, Keys: []string{"accessLogRetentionDays"}, Default: "365", Range: "S3 access logs; not in local"},
	{Table: Stack, Keys: []string{"sweepSchedule"}, Default: "`rate(1 minute)`"},
	{Table: Stack, Keys: []string{"alarmTopicArn"}, Default: "the stack creates `AlarmTopic`", Needed: "optional"},
	{Table: Stack, Keys: []string{"alarmEmail"}, Default: "none", Needed: "recommended outside local", Placeholder: ExampleDomain, Sample: "oncall@studio.test"},
	{Table: Stack, Keys: []string{"operatorRoleArn"}, Default: "none", Needed: "optional: the one role besides fetch allowed to read raw artifacts"},
	{Table: Stack, Keys: []string{"rawBucketDataEvents"}, Default: "false", Needed: "optional: CloudTrail S3 data events for the raw bucket"},
	{Table: Stack, Keys: []string{"apiRateLimit", "apiBurstLimit"}, Default: "50 / 100 requests per second", Range: "API Gateway stage throttling"},
	{Table: Stack, StackVars: "`CRITICIZER_ENV`, `JOBS_TABLE`, `<STAGE>_QUEUE_URL`, `<STAGE>_DLQ_URL`, `RAW_BUCKET`, `REDACTED_BUCKET`"},
	{Table: Network, Keys: []string{"vpc"}, KeyNote: "(`vpcId`, `subnetIds`, `securityGroupIds`, `createEndpoints`, `routeTableIds`, `allFunctions`)", Default: "none: functions outside a VPC", Needed: "a Perforce server on a private network; refused in local"},
	{Table: Network, Keys: []string{"apiGatewayCloudWatchRole"}, Default: "`create` outside local, `existing` in local", Needed: "one environment per account creates it; the others say `existing`"},
	{Table: Network, Keys: []string{"kmsKey"}, Default: "empty: AWS-managed keys", Needed: "optional: `create` (prod as checked in) or a key ARN"},
	{Table: Network, Keys: []string{"sesIdentity"}, Default: "the domain of `smtpFrom`", Needed: "with `ses`, when sending as another verified identity"},
	{Table: Webhook, Keys: []string{"replayWindowSeconds"}, Vars: []string{"REPLAY_WINDOW_SECONDS"}, ReadBy: []string{"webhook"}, Default: "300", Range: "the function accepts 30–3600"},
	{Table: Webhook, Keys: []string{"recipientDomains"}, Vars: []string{"RECIPIENT_DOMAINS"}, ReadBy: []string{"webhook", "fetch", "notify", "digest"}, Default: "none", Needed: "every environment but local: the e-mail domains that may receive code ([who may receive code](api.md#who-may-receive-code))", Placeholder: ExampleDomain, Sample: []string{"studio.test", "*.corp.studio.test"}},
	{Table: Webhook, Keys: []string{"maxRecipients"}, Vars: []string{"MAX_RECIPIENTS"}, ReadBy: []string{"webhook", "fetch", "notify", "digest"}, Default: "10", Range: "1–50 per request"},
	{Table: Webhook, Keys: []string{"jobPage"}, Vars: []string{"JOB_PAGE_SECRET_ID"}, ReadBy: []string{"webhook", "notify", "jobpage"}, Default: "false", Needed: "optional: the read-only job page ([jobpage.md](jobpage.md))"},
	{Table: Webhook, Keys: []string{"publicBaseUrl"}, Vars: []string{"JOB_PAGE_BASE_URL"}, ReadBy: []string{"notify", "webhook"}, Default: "the API's URL", Needed: "optional, with `jobPage`: the links' base behind a custom domain"},
	{Table: Webhook, Keys: []string{"swarmUrl"}, Vars: []string{"SWARM_URL"}, ReadBy: []string{"webhook", "fetch", "notify", "sweeper"}, Default: "none: Swarm off", Needed: "with Swarm; creates the two Swarm secrets"},
	{Table: Webhook, StackVars: "`WEBHOOK_SECRET_ID`; with `swarmUrl`, `SWARM_TOKEN_SECRET_ID` and, unless Swarm is private, `SWARM_API_SECRET_ID` (webhook: a run is held to its review with 422)"},
	{Table: Fetch, Keys: []string{"depotAllowList"}, Vars: []string{"DEPOT_ALLOWLIST"}, ReadBy: []string{"fetch"}, Default: "none", Needed: "every environment: the depot paths fetch may read (`//depot/projectA/...`)"},
	{Table: Fetch, Keys: []string{"p4Port"}, Vars: []string{"P4PORT"}, ReadBy: []string{"fetch"}, Default: "none; local the stand-in", Needed: "every environment", Placeholder: ExampleDomain, Sample: "ssl:perforce.studio.test:1666"},
	{Table: Fetch, Keys: []string{"p4User"}, Vars: []string{"P4USER"}, ReadBy: []string{"fetch"}, Default: "`criticizer`"},
	{Table: Fetch, Keys: []string{"p4Bin"}, Vars: []string{"P4_BIN"}, ReadBy: []string{"fetch"}, Default: "`/opt/bin/p4` (the layer)"},
	{Table: Fetch, Keys: []string{"p4LayerPath"}, Default: "none", Needed: "every non-local environment (`build/p4-layer`)"},
	{Table: Fetch, Keys: []string{"p4LayerSha256"}, Default: "none", Needed: "with `p4LayerPath`: the SHA-256 of the p4 client this environment runs; synth refuses a layer built from any other", Placeholder: AllZero},
	{Table: Fetch, Keys: []string{"p4ServerRole"}, Vars: []string{"P4_SERVER_ROLE"}, ReadBy: []string{"fetch"}, Default: "`standard`; local `commit`", Needed: "`commit` or `edge` in a commit-edge installation: an unpromoted edge shelf is `SHELF_NOT_PROMOTED`"},
	{Table: Fetch, Keys: []string{"p4TimeoutSeconds"}, Vars: []string{"P4_TIMEOUT_SECONDS"}, ReadBy: []string{"fetch"}, Default: "30; local 8", Range: "below the lease"},
	{Table: Fetch, Keys: []string{"p4TrustFingerprint"}, Vars: []string{"P4TRUST_FINGERPRINT"}, ReadBy: []string{"fetch"}, Default: "none", Needed: "`ssl:` ports (synth fails without it)", Placeholder: AllZero, Sample: "AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89:AB:CD:EF:01"},
	{Table: Fetch, Keys: []string{"p4Charset"}, Vars: []string{"P4CHARSET"}, ReadBy: []string{"fetch"}, Default: "unset", Needed: "non-unicode servers with non-UTF-8 files (`iso8859-1`), unicode-mode servers (`utf8`)"},
	{Table: Fetch, Keys: []string{"p4Parallelism"}, Vars: []string{"P4_PARALLELISM"}, ReadBy: []string{"fetch"}, Default: "4", Range: "1–32 p4 processes per job"},
	{Table: Fetch, Keys: []string{"redactEmails"}, Vars: []string{"REDACT_EMAILS"}, ReadBy: []string{"fetch", "review"}, Default: "true"},
	{Table: Fetch, Keys: []string{"confidentialDomains"}, Vars: []string{"CONFIDENTIAL_DOMAINS"}, ReadBy: []string{"fetch", "review"}, Default: "none", Needed: "optional: hosts under these domains are redacted"},
	{Table: Fetch, Keys: []string{"confidentialCidrs"}, Vars: []string{"CONFIDENTIAL_CIDRS"}, ReadBy: []string{"fetch", "review"}, Default: "none", Needed: "optional: addresses in these ranges are redacted"},
	{Table: Fetch, StackVars: "`P4_SECRET_ID`; with `swarmUrl`, `SWARM_API_SECRET_ID` (fetch)"},
	{Table: Review, Keys: []string{"llmProvider"}, Vars: []string{"LLM_PROVIDER"}, ReadBy: []string{"review"}, Default: "`openai`; dev, staging and prod as checked in use `bedrock`", Range: "`openai`, `anthropic`, `bedrock`; [choosing one](network-and-iam.md#the-llm-provider)"},
	{Table: Review, Keys: []string{"llmEndpoint"}, Vars: []string{"LLM_ENDPOINT"}, ReadBy: []string{"review"}, Default: "none; local the stand-in", Needed: "openai and anthropic: the base URL, no path (`https://api.openai.com`); bedrock: optional VPC endpoint"},
	{Table: Review, Keys: []string{"llmModel"}, Vars: []string{"LLM_MODEL"}, ReadBy: []string{"review"}, Default: "`gpt-4o-mini`", Range: "with bedrock, a Bedrock model ID enabled in the region"},
	{Table: Review, Keys: []string{"llmTimeoutSeconds"}, Vars: []string{"LLM_TIMEOUT_SECONDS"}, ReadBy: []string{"review"}, Default: "45; local 8", Range: "below the lease"},
	{Table: Review, Keys: []string{"reviewTimeoutSeconds"}, Vars: []string{"QUEUE_VISIBILITY_SECONDS"}, ReadBy: []string{"review"}, Default: "900; local 30", Range: "leaseSeconds–900: the review function's timeout and the llm queue's visibility"},
	{Table: Review, Keys: []string{"llmRequestsPerMinute", "llmTokensPerMinute"}, Vars: []string{"LLM_REQUESTS_PER_MINUTE", "LLM_TOKENS_PER_MINUTE"}, ReadBy: []string{"review"}, Default: "0: learnt from the provider's rate-limit headers", Needed: "bedrock (which sends none: Service Quotas shows them); a configured token limit is shared by every concurrent review (a per-minute budget item in the jobs table)"},
	{Table: Review, Keys: []string{"llmPricesPerMTok"}, Vars: []string{"LLM_PRICES_PER_MTOK"}, ReadBy: []string{"review"}, Default: "empty: no cost estimate", Needed: "the model's list prices, `input=3,cached_input=0.3,cache_write=3.75,output=15` (USD per million tokens): each review records its estimated cost (`estimated_cost_usd` in the result's meta), shown in the e-mail beside its tokens; see [benchmarks.md](benchmarks.md#monthly-cost)"},
	{Table: Review, Keys: []string{"promptPatchDrift"}, Vars: []string{"PROMPT_PATCH_DRIFT"}, ReadBy: []string{"review"}, Default: "false", Needed: "optional: accept an answer whose `prompt_version` differs only in its patch (RC-4)"},
	{Table: Review, Keys: []string{"validFindingsSlo"}, Default: "outside local: `{\"1.0.0\": 0.1}`", Needed: "required outside local for every served prompt version (stable and candidate): minimum average valid findings per job; below it for an hour `ValidFindingsSloAlarm…` pages; `criticizer promote` judges by it"},
	{Table: Review, Keys: []string{"droppedFindingsSlo"}, Default: "outside local: `{\"1.0.0\": 0.5}`", Needed: "required outside local for every served prompt version: maximum average dropped findings per job; above it for an hour `DroppedFindingsSloAlarm…` pages; `criticizer promote` judges by it"},
	{Table: Review, Keys: []string{"promptCandidateVersion"}, Vars: []string{"PROMPT_CANDIDATE_VERSION"}, ReadBy: []string{"review"}, Default: "none", Needed: "with a canary: a prompt version this build has a template for (`1.1.0`, `1.2.0`; shared/result's prompt versions)"},
	{Table: Review, Keys: []string{"promptCandidatePercent"}, Vars: []string{"PROMPT_CANDIDATE_PERCENT"}, ReadBy: []string{"review"}, Default: "0", Needed: "with a canary: 0–100 % of jobs; 0 rolls back"},
	{Table: Review, Keys: []string{"llmMaxOutputTokens"}, Vars: []string{"LLM_MAX_OUTPUT_TOKENS"}, ReadBy: []string{"review"}, Default: "4096", Range: "256 and up"},
	{Table: Review, Keys: []string{"llmResponseFormat"}, Vars: []string{"LLM_RESPONSE_FORMAT"}, ReadBy: []string{"review"}, Default: "`json_schema`", Needed: "openai only; `json_object` for DeepSeek and older servers"},
	{Table: Review, Keys: []string{"llmContextTokens"}, Vars: []string{"LLM_CONTEXT_TOKENS"}, ReadBy: []string{"review"}, Default: "by model family (`shared/result/chunk.go`)", Needed: "models the table does not know"},
	{Table: Review, Keys: []string{"llmBytesPerToken"}, Vars: []string{"LLM_BYTES_PER_TOKEN"}, ReadBy: []string{"review"}, Default: "by model family", Range: "1–16"},
	{Table: Review, Keys: []string{"llmParallelism"}, Vars: []string{"LLM_PARALLELISM"}, ReadBy: []string{"review"}, Default: "4", Range: "1–64 chunks at once"},
	{Table: Review, Keys: []string{"reviewMaxFiles"}, Vars: []string{"REVIEW_MAX_FILES"}, ReadBy: []string{"review"}, Default: "5,000", Range: "files reviewed per changelist"},
	{Table: Review, Keys: []string{"reviewMaxBytes"}, Vars: []string{"REVIEW_MAX_BYTES"}, ReadBy: []string{"review"}, Default: "64 MiB", Range: "diff bytes per changelist"},
	{Table: Review, Keys: []string{"reviewMaxFileBytes"}, Vars: []string{"REVIEW_MAX_FILE_BYTES"}, ReadBy: []string{"review"}, Default: "256 KiB", Range: "diff bytes per file"},
	{Table: Review, Keys: []string{"reviewMaxChunkFiles"}, Vars: []string{"REVIEW_MAX_CHUNK_FILES"}, ReadBy: []string{"review"}, Default: "100", Range: "files per model call"},
	{Table: Review, Keys: []string{"reviewMaxTokens"}, Vars: []string{"REVIEW_MAX_TOKENS"}, ReadBy: []string{"review"}, Default: "0: unbounded", Needed: "optional: one review's token budget; files past it are skipped `over_budget`"},
	{Table: Review, Keys: []string{"dailyTokenBudget"}, Vars: []string{"REVIEW_DAILY_TOKEN_BUDGET"}, ReadBy: []string{"review"}, Default: "0: unbounded", Needed: "optional: the environment's model tokens per UTC day; `DailyTokenBudgetAlarm` at 80 %"},
	{Table: Review, Keys: []string{"reviewRules"}, Vars: []string{"REVIEW_RULES"}, ReadBy: []string{"review"}, Default: "none", Needed: "optional: the environment's default review rules, in the schema of the depot's `.criticizer.yaml` ([design.md](design.md#reviews-developers-can-trust))"},
	{Table: Review, StackVars: "`LLM_SECRET_ID` (review; not with bedrock, which uses the function's role)"},
	{Table: Notify, Keys: []string{"emailProvider"}, Vars: []string{"EMAIL_PROVIDER"}, ReadBy: []string{"notify", "sweeper", "digest"}, Default: "`smtp`", Range: "`smtp` or `ses`; dev, staging and prod use `ses`"},
	{Table: Notify, Keys: []string{"smtpFrom"}, Vars: []string{"SMTP_FROM"}, ReadBy: []string{"notify", "sweeper", "digest"}, Default: "`criticizer@example.com`", Needed: "every environment: the From address (its domain is in every Message-ID)", Placeholder: ExampleDomain, Sample: "criticizer@studio.test"},
	{Table: Notify, Keys: []string{"sesConfigurationSet"}, Vars: []string{"SES_CONFIGURATION_SET"}, ReadBy: []string{"notify", "digest"}, Default: "none", Needed: "`ses`: the stack creates it and routes its events to `sesevents`"},
	{Table: Notify, Keys: []string{"smtpHost"}, Vars: []string{"SMTP_HOST"}, ReadBy: []string{"notify", "digest"}, Default: "none", Needed: "`smtp`"},
	{Table: Notify, Keys: []string{"smtpPort"}, Vars: []string{"SMTP_PORT"}, ReadBy: []string{"notify", "digest"}, Default: "587"},
	{Table: Notify, Keys: []string{"smtpTLS"}, Vars: []string{"SMTP_TLS"}, ReadBy: []string{"notify", "digest"}, Default: "`starttls`", Range: "`starttls`, `tls`, `none`"},
	{Table: Notify, Keys: []string{"smtpTimeoutSeconds"}, Vars: []string{"SMTP_TIMEOUT_SECONDS"}, ReadBy: []string{"notify", "digest"}, Default: "10; local 3", Range: "3 × it must stay below the lease"},
	{Table: Notify, Keys: []string{"smtpLookupUrl"}, Vars: []string{"SMTP_LOOKUP_URL"}, ReadBy: []string{"notify", "sweeper", "digest"}, Default: "none", Needed: "recommended with `smtp`: the relay's message lookup; without it an uncertain send becomes `DELIVERY_UNCONFIRMED`"},
	{Table: Notify, Keys: []string{"sendCompletionWindowSeconds"}, Vars: []string{"SEND_COMPLETION_WINDOW_SECONDS"}, ReadBy: []string{"notify", "sweeper", "digest"}, Default: "0 = the provider's: 5 min SMTP, 15 min SES; local 60", Range: "more than 3 × `smtpTimeoutSeconds`"},
	{Table: Notify, Keys: []string{"notifyChannels"}, Vars: []string{"NOTIFY_CHANNELS"}, ReadBy: []string{"notify"}, Default: "`[\"email\"]`", Needed: "optional: `[\"email\", \"swarm-comments\"]` also posts findings as comments on the job's Swarm review (needs `swarmUrl`; [perforce-and-swarm.md](perforce-and-swarm.md#findings-as-review-comments))"},
	{Table: Notify, Keys: []string{"swarmCommentWindowSeconds"}, Vars: []string{"SWARM_COMMENT_WINDOW_SECONDS"}, ReadBy: []string{"notify", "sweeper"}, ReadNote: "with swarm-comments", Default: "0 = 120", Range: "31–3600: longer than a create Swarm may still be storing"},
	{Table: Notify, Keys: []string{"swarmMaxInlineComments"}, Vars: []string{"SWARM_MAX_INLINE_COMMENTS"}, ReadBy: []string{"notify"}, ReadNote: "with swarm-comments", Default: "0 = 50", Range: "1–500: finding comments per review version; past it the least severe are left out first and listed, by title and file:line, in the summary comment"},
	{Table: Notify, Keys: []string{"swarmEmailParticipants"}, Vars: []string{"SWARM_EMAIL_PARTICIPANTS"}, ReadBy: []string{"notify"}, ReadNote: "with swarm-comments", Default: "false", Range: "true also e-mails a Swarm review's participants the findings Swarm already tells them of"},
	{Table: Notify, Keys: []string{"swarmGateSeverity"}, Vars: []string{"SWARM_GATE_SEVERITY"}, ReadBy: []string{"notify"}, Default: "off", Needed: "optional, needs `swarmUrl`: findings at or above it fail the review's Swarm test run; a rules file's `gate_severity` overrides it for its path"},
	{Table: Notify, Keys: []string{"swarmPrivate"}, VarNote: "(placement)", Default: "false", Needed: "a Swarm reachable only inside the studio's network (also inferred from a private host in `swarmUrl`): fetch, review, notify and the sweeper run in `vpc`, which must be set"},
	{Table: Notify, Keys: []string{"weeklyDigest"}, Vars: []string{"WEEKLY_DIGEST"}, ReadBy: []string{"notify"}, Default: "false", Needed: "optional: the weekly digest e-mail to the depot path owners who opted in; notify records each job's week entry, and the stack adds the digest function and its weekly schedule ([operating.md](operating.md#weekly-digest))"},
	{Table: Notify, Keys: []string{"digestOwners"}, Vars: []string{"DIGEST_OWNERS"}, ReadBy: []string{"digest"}, Default: "none", Needed: "with `weeklyDigest`: who owns which depot paths, a pattern → addresses (`{\"//depot/engine/...\": [\"lead@studio.test\"]}`)"},
	{Table: Notify, Keys: []string{"digestOptIn"}, Vars: []string{"DIGEST_OPT_IN"}, ReadBy: []string{"digest"}, Default: "none: nobody", Needed: "with `weeklyDigest`: the owners who receive it; an owner not listed gets nothing"},
	{Table: Notify, Keys: []string{"digestSchedule"}, Default: "`cron(0 6 ? * MON *)`", Range: "an EventBridge schedule; each run digests the ISO week before the one it fires in"},
	{Table: Notify, StackVars: "`SMTP_SECRET_ID` (notify and digest, with `smtp`); `DELIVERY_KEY_SECRET_ID` (notify, sweeper, digest: the key of the recipient hash and the e-mail token, generated by the stack, never rotated); `RAW_ARTIFACT_TTL_DAYS`, `REDACTED_ARTIFACT_TTL_DAYS` (sweeper: the buckets' lifecycle, 7 and 30 days)"},
}
