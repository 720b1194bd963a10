package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/constructs-go/constructs/v10"

	"github.com/criticizer/criticizer/shared/outcome"
	"github.com/criticizer/criticizer/shared/result"
)

// Context keys read by the app. The cdk CLI passes them from cdk.json and -c;
// internal/devstack passes them through CDK_CONTEXT_JSON.
const (
	ctxEnv          = "env"          // which environment to synthesize; default "dev"
	ctxEnvironments = "environments" // map env name -> partial EnvConfig (JSON), laid over the Go defaults
	ctxOverrides    = "overrides"    // partial EnvConfig laid over the chosen environment (object or JSON string)
	ctxAssetRoot    = "assetRoot"    // directory holding <function>/bootstrap; default "build/lambda"
	// ctxMetricMathAlarms=false leaves out alarms on Metrics Insights queries
	// (set by internal/devstack: the emulator rejects them). Default true.
	ctxMetricMathAlarms = "metricMathAlarms"

	defaultEnv       = "dev"
	defaultAssetRoot = "build/lambda"
)

// knownEnvs are the environments this app defines defaults for.
var knownEnvs = []string{"local", "dev", "staging", "prod"}

// StageConcurrency is W of rule LC-5, per pipeline stage: at most W messages of a
// stage are worked on at once. A function invocation works its whole batch
// concurrently, so the stack sets the event source mapping's MaximumConcurrency
// to W / batchSize (AWS rejects values below 2): W must be a multiple of
// batchSize and at least 2 × batchSize.
type StageConcurrency struct {
	Fetch  int `json:"fetch"`
	LLM    int `json:"llm"`
	Notify int `json:"notify"`
}

// EnvConfig is everything that differs between environments. JSON names are the
// keys used in cdk.json `environments.<env>` and in the `overrides` context.
type EnvConfig struct {
	// Account and Region pin the stack's environment. Empty = environment-agnostic
	// (the cdk CLI / CloudFormation decide).
	Account string `json:"account"`
	Region  string `json:"region"`

	// Architecture of all functions: "arm64" (default) or "x86_64" (local: the
	// emulator runs bootstrap as a host process, so it must match the host).
	Architecture string `json:"architecture"`

	// LeaseSeconds is the stage lease = SQS visibility timeout of each stage queue
	// = timeout of the consuming function. Default 60, local 10.
	LeaseSeconds int `json:"leaseSeconds"`
	// MaxAttempts is the per-stage attempt budget (spec: 5). Queue redrive
	// maxReceiveCount is MaxAttempts+3, a backstop for crashes only.
	MaxAttempts int `json:"maxAttempts"`
	// MaxConcurrency per stage: W, the most messages of a stage in work at once
	// (ESM MaximumConcurrency × BatchSize = W). Default 2 each.
	MaxConcurrency StageConcurrency `json:"maxConcurrency"`
	// BatchSize of each SQS event source mapping (1..10). Default 1.
	BatchSize int `json:"batchSize"`

	// DepotAllowList: depot paths the fetch stage may read, e.g. "//depot/projectA/...".
	DepotAllowList []string `json:"depotAllowList"`
	// P4Bin is the p4 client binary. Default "/opt/bin/p4" (the p4 layer);
	// local overrides it with an absolute path to the stand-in.
	P4Bin  string `json:"p4Bin"`
	P4Port string `json:"p4Port"`
	P4User string `json:"p4User"`
	// P4TimeoutSeconds bounds one p4 invocation; must be below LeaseSeconds. Default 30, local 8.
	P4TimeoutSeconds int `json:"p4TimeoutSeconds"`
	// P4LayerPath is a directory whose content becomes a Lambda layer (mounted at
	// /opt) attached to the fetch function: `make p4-layer P4=…` stages the
	// binary in build/p4-layer/bin/p4 (→ /opt/bin/p4). Required outside local.
	P4LayerPath string `json:"p4LayerPath"`
	// P4LayerSHA256 is the SHA-256 of the p4 client this environment runs
	// (lower-case hex, as Perforce publishes it): `make p4-layer P4_SHA256=…`
	// refuses any other binary, and synth refuses a layer whose recorded or
	// actual checksum differs. Required with p4LayerPath.
	P4LayerSHA256 string `json:"p4LayerSha256,omitempty"`
	// P4ServerRole is the role of the server p4Port names: "standard"
	// (default), or "commit" / "edge" in a commit-edge installation, where a
	// shelf not promoted from its edge is SHELF_NOT_PROMOTED (P4_SERVER_ROLE).
	P4ServerRole string `json:"p4ServerRole,omitempty"`
	// P4TrustFingerprint: the server's SSL fingerprint for ssl: ports (P4TRUST).
	P4TrustFingerprint string `json:"p4TrustFingerprint,omitempty"`
	// P4Charset for non-unicode servers (P4CHARSET), e.g. "utf8". Empty = unset.
	P4Charset string `json:"p4Charset,omitempty"`
	// P4Parallelism bounds concurrent p4 prints per job. 0 = the fetch default.
	P4Parallelism int `json:"p4Parallelism,omitempty"`
	// P4MaxFileBytes: a larger file is listed, not fetched (P4_MAX_FILE_BYTES). 0 = the fetch default.
	P4MaxFileBytes int `json:"p4MaxFileBytes,omitempty"`

	// LLMProvider: openai (OpenAI-compatible), anthropic or bedrock.
	LLMProvider string `json:"llmProvider"`
	// LLMEndpoint is the provider's BASE URL (scheme://host[:port], no API path):
	// the client appends /v1/chat/completions (openai) or /v1/messages
	// (anthropic). Not used by bedrock (the SDK resolves the regional endpoint).
	LLMEndpoint string `json:"llmEndpoint"`
	LLMModel    string `json:"llmModel"`
	// PromptCandidateVersion is a prompt version under canary; PromptCandidatePercent
	// (0..100) of jobs use it. Empty = no canary.
	PromptCandidateVersion string `json:"promptCandidateVersion,omitempty"`
	PromptCandidatePercent int    `json:"promptCandidatePercent,omitempty"`
	// LLMModelCandidate is a model under canary, at the same provider;
	// LLMModelCandidatePercent (0..100) of jobs use it. Empty = no canary.
	LLMModelCandidate        string `json:"llmModelCandidate,omitempty"`
	LLMModelCandidatePercent int    `json:"llmModelCandidatePercent,omitempty"`
	// LLMTimeoutSeconds bounds one LLM call; must be below LeaseSeconds. Default 45, local 8.
	LLMTimeoutSeconds int `json:"llmTimeoutSeconds"`
	// LLMSettings are the llm function's optional model limits (infra/settings.go).
	LLMSettings
	// ReviewTimeoutSeconds is the llm function's timeout and so its
	// queue's visibility timeout (AWS requires it to be at least the
	// function's): a long review waits out the provider's rate limits inside
	// one attempt (docs/guarantees.md rule BO-4). The stage sets each claimed
	// message's visibility to leaseSeconds at once and heartbeats it, so a
	// crashed worker's message still returns within the lease. Default 900
	// (Lambda's maximum), local 30.
	ReviewTimeoutSeconds int `json:"reviewTimeoutSeconds"`
	// LLMRequestsPerMinute and LLMTokensPerMinute are the provider's limits
	// for llmModel (LLM_REQUESTS_PER_MINUTE, LLM_TOKENS_PER_MINUTE): the
	// llm function paces its calls to them from the first call. 0 (the
	// default) learns them from the provider's rate-limit headers; set them
	// for bedrock, which sends none (Service Quotas shows them). A chunk is
	// never planned larger than the token limit.
	LLMRequestsPerMinute int `json:"llmRequestsPerMinute,omitempty"`
	LLMTokensPerMinute   int `json:"llmTokensPerMinute,omitempty"`
	// LLMPricesPerMTok are llmModel's list prices in USD per million tokens,
	// "input=3,cached_input=0.3,cache_write=3.75,output=15"
	// (LLM_PRICES_PER_MTOK): each review's estimated cost is then recorded
	// and shown in its e-mail. Empty (the default): no estimate.
	LLMPricesPerMTok string `json:"llmPricesPerMTok,omitempty"`
	// LLMModelCandidatePricesPerMTok are llmModelCandidate's list prices, in
	// the same format: its reviews' cost is estimated at them (empty: none).
	// LLMModelCandidateRequestsPerMinute and LLMModelCandidateTokensPerMinute
	// are its limits, which providers set per model; 0 (the default) takes
	// llmModel's. `criticizer promote --model` moves all three to llmModel's.
	LLMModelCandidatePricesPerMTok     string `json:"llmModelCandidatePricesPerMTok,omitempty"`
	LLMModelCandidateRequestsPerMinute int    `json:"llmModelCandidateRequestsPerMinute,omitempty"`
	LLMModelCandidateTokensPerMinute   int    `json:"llmModelCandidateTokensPerMinute,omitempty"`

	SMTPHost string `json:"smtpHost"`
	SMTPPort int    `json:"smtpPort"`
	SMTPFrom string `json:"smtpFrom"`
	// SMTPTLS is "starttls", "tls" or "none".
	SMTPTLS string `json:"smtpTLS"`
	// SMTPLookupURL is an optional provider-evidence endpoint (the relay message lookup) (GET ?message_id=)
	// the notify stage asks before resending a message whose send may have
	// happened. Without one, such a delivery is dead-lettered as
	// DELIVERY_UNCONFIRMED for an operator instead of being resent blind.
	SMTPLookupURL string `json:"smtpLookupUrl,omitempty"`
	// SMTPTimeoutSeconds bounds dialling and each SMTP step (SMTP_TIMEOUT_SECONDS).
	// The notify function's timeout is leaseSeconds, which must exceed it.
	SMTPTimeoutSeconds int `json:"smtpTimeoutSeconds"`
	// EmailProvider: smtp or ses (SES v2 with IAM, no SMTP password).
	EmailProvider string `json:"emailProvider"`
	// SESConfigurationSet: the SES configuration set whose event publishing
	// feeds delivery lookups (ses only).
	SESConfigurationSet string `json:"sesConfigurationSet,omitempty"`
	// SendCompletionWindowSeconds: how long after a send started the provider may
	// still complete it. 0 = the provider's default.
	SendCompletionWindowSeconds int `json:"sendCompletionWindowSeconds,omitempty"`

	// SwarmURL is the Helix Swarm base URL; when set, the stack creates the Swarm
	// bearer-token and API secrets for the webhook. Empty = Swarm auth off.
	SwarmURL string `json:"swarmUrl,omitempty"`
	// SwarmPrivate: the Swarm server is reachable only inside the studio's
	// network (also inferred from a private host in swarmUrl): fetch,
	// review, notify and the sweeper then run in the VPC, which must be set
	// (infra/swarmnetwork.go).
	SwarmPrivate bool `json:"swarmPrivate,omitempty"`
	// SwarmGateSeverity: findings at or above it fail the review's Swarm
	// test run (a workflow requiring tests to pass then blocks the merge);
	// "" or "off" never does (SWARM_GATE_SEVERITY; docs/perforce-and-swarm.md).
	SwarmGateSeverity string `json:"swarmGateSeverity,omitempty"`
	// SwarmEmailParticipants: with Swarm comments on, also e-mail a Swarm
	// review's participants its findings (SWARM_EMAIL_PARTICIPANTS). false,
	// the default: Swarm's own notification of the comments tells them,
	// once. Changelists from triggers and the API are e-mailed either way.
	SwarmEmailParticipants bool `json:"swarmEmailParticipants,omitempty"`
	// NotifyChannels: how the notify stage tells people, ["email"] (the
	// default) or ["email", "swarm-comments"] (findings also as comments on
	// the job's Swarm review; needs swarmUrl). SwarmCommentWindowSeconds: how
	// long Swarm may still store a comment whose answer was lost (0 = 120).
	// See infra/notifychannels.go.
	NotifyChannels            []string `json:"notifyChannels,omitempty"`
	SwarmCommentWindowSeconds int      `json:"swarmCommentWindowSeconds,omitempty"`
	// SwarmMaxInlineComments caps the finding comments one review version
	// gets (0 = 50, at most 500); the rest are listed in the summary comment.
	SwarmMaxInlineComments int `json:"swarmMaxInlineComments,omitempty"`
	// SwarmEvents: P4 Code Review's signed outbound webhooks, off by
	// default (infra/swarmevents.go).
	SwarmEvents SwarmEventsConfig `json:"swarmEvents,omitzero"`
	// DismissThreshold and DismissScopeDepth: the noise filter's N and
	// scope (infra/dismissals.go); 0: 3 and 1 (//depot/<first dir>/...).
	DismissThreshold  int `json:"dismissThreshold,omitempty"`
	DismissScopeDepth int `json:"dismissScopeDepth,omitempty"`
	// The rest of the noise filter's one policy (shared/outcome Policy):
	// standing and confirmation.
	DismissMinPeople  int      `json:"dismissMinPeople,omitempty"`
	DismissMinReviews int      `json:"dismissMinReviews,omitempty"`
	DismissDeciders   []string `json:"dismissDeciders,omitempty"`
	DismissBotLogins  []string `json:"dismissBotLogins,omitempty"`
	DismissConfirm    bool     `json:"dismissConfirm,omitempty"`

	// Recipient policy (shared/recipients; webhook, fetch, notify): the e-mail
	// domains that may receive code ("example.com" exactly, "*.example.com"
	// its subdomains), required outside local, and how many recipients a
	// request may name (default 10, at most 50). See infra/recipients.go.
	RecipientDomains []string `json:"recipientDomains,omitempty"`
	MaxRecipients    int      `json:"maxRecipients,omitempty"`

	// Redaction policy, used by the fetch stage AND the llm-stage guard.
	RedactEmails        bool     `json:"redactEmails"`
	ConfidentialDomains []string `json:"confidentialDomains,omitempty"`
	ConfidentialCIDRs   []string `json:"confidentialCidrs,omitempty"`

	// ClockSkewSeconds: the clock-skew budget between function hosts. Default 2.
	ClockSkewSeconds int `json:"clockSkewSeconds"`
	// RetentionDays: TTL (expires_at) of job, idempotency and outbox rows. Default 30.
	RetentionDays int `json:"retentionDays"`
	// The settings of docs/guarantees.md's newer rules (validated in
	// guarantees.go): UniquenessRetentionDays is the TTL of idempotency
	// records, changelist gates and outbox rows (default 365, 0 = forever);
	// PromptPatchDrift accepts a model's prompt_version differing in its
	// patch segment; ValidFindingsSLO maps a prompt version to the minimum
	// average of valid findings per job below which its rollback alarm pages.
	UniquenessRetentionDays int                `json:"uniquenessRetentionDays"`
	PromptPatchDrift        bool               `json:"promptPatchDrift,omitempty"`
	ValidFindingsSLO        map[string]float64 `json:"validFindingsSlo,omitempty"`
	// DroppedFindingsSLO maps a prompt version to the maximum average of
	// model findings the parser drops per job; above it its rollback alarm
	// pages. Outside local both SLOs are required for every served version.
	DroppedFindingsSLO map[string]float64 `json:"droppedFindingsSlo,omitempty"`
	// Acceptance of posted findings (issue 32, package outcome): the share
	// accepted of those reviewers accepted or dismissed. Below
	// AcceptanceAlarmThreshold over a day AcceptanceAlarm pages; `criticizer
	// promote` refuses a candidate whose canary acceptance is below the
	// stable version's by more than AcceptanceMargin, or that has fewer than
	// AcceptanceMinSample judged findings (it reads these from cdk.json).
	// AcceptanceAlarmMinSample is the fewest findings judged in a day the
	// alarm judges: below it the day does not page.
	AcceptanceAlarmThreshold float64 `json:"acceptanceAlarmThreshold"`
	AcceptanceAlarmMinSample int     `json:"acceptanceAlarmMinSample"`
	AcceptanceMargin         float64 `json:"acceptanceMargin"`
	AcceptanceMinSample      int     `json:"acceptanceMinSample"`

	// APIRateLimit / APIBurstLimit: API Gateway stage throttling (requests/s, burst).
	APIRateLimit  int `json:"apiRateLimit"`
	APIBurstLimit int `json:"apiBurstLimit"`

	// ReplayWindowSeconds is the webhook HMAC timestamp tolerance. Default 300.
	ReplayWindowSeconds int `json:"replayWindowSeconds"`
	// LogLevel for the functions: debug, info, warn, error.
	LogLevel string `json:"logLevel"`
	// LogRetentionDays of the functions' log groups (a CloudWatch Logs allowed value).
	LogRetentionDays int `json:"logRetentionDays"`
	// AccessLogRetentionDays: expiry of the S3 server access logs (not used in local).
	AccessLogRetentionDays int `json:"accessLogRetentionDays"`
	// SweepSchedule is the EventBridge schedule expression of the sweeper.
	SweepSchedule string `json:"sweepSchedule"`
	// AlarmTopicArn: an existing SNS topic notified by every alarm. Empty = the
	// stack creates one (AlarmTopic).
	AlarmTopicArn string `json:"alarmTopicArn"`
	// isLocal is set by LoadConfig for the local environment (not a setting).
	isLocal bool

	// OperatorRoleArn: the one human/operator role allowed to read the raw
	// (unredacted) artifacts besides the fetch function that writes them.
	OperatorRoleArn string `json:"operatorRoleArn,omitempty"`
	// RawBucketDataEvents: a CloudTrail trail logging S3 data events (every
	// read and write) of the raw bucket.
	RawBucketDataEvents bool `json:"rawBucketDataEvents,omitempty"`

	// AlarmEmail: optional e-mail subscription to the alarm topic.
	AlarmEmail string `json:"alarmEmail,omitempty"`

	// ReviewSettings: per-review limits, daily budget, default review rules (review_settings.go).
	ReviewSettings

	// VPC places functions in an existing VPC (a private path to Perforce);
	// nil = no VPC. See VPCConfig and docs/network-and-iam.md.
	VPC *VPCConfig `json:"vpc,omitempty"`
	// APIGatewayCloudWatchRole is API Gateway's account-level CloudWatch role,
	// which access logging needs: "create" (the stack creates the role and
	// sets the account to it), "existing" (the account is already set; the
	// stack leaves it alone) or an IAM role ARN the stack sets the account to.
	// Default create; local existing (the emulator needs none).
	APIGatewayCloudWatchRole string `json:"apiGatewayCloudWatchRole"`
	// KMSKey: a customer-managed key for tables, queues, buckets, secrets,
	// logs, the alarm topic and function environments: "" (AWS-managed
	// encryption), "create" (the stack creates one, rotated yearly) or a key ARN.
	KMSKey string `json:"kmsKey,omitempty"`
	// SESIdentity is the SES identity notify sends as (a domain or address);
	// its sending is limited to it and the configuration set. Default: the
	// domain of smtpFrom.
	SESIdentity string `json:"sesIdentity,omitempty"`

	// JobPage turns on the read-only job page (GET /view/{id}/{token}) and
	// its links in Swarm and the e-mail; PublicBaseURL is the API's public
	// base URL for those links (default: the API's own URL). See infra/jobpage.go.
	JobPage       bool   `json:"jobPage,omitempty"`
	PublicBaseURL string `json:"publicBaseUrl,omitempty"`

	// DigestConfig: the weekly digest (digest.go).
	DigestConfig
}

// VPCConfig is where functions run inside a studio's network. IDs only:
// nothing is looked up at synth, so no account is needed to synthesize.
type VPCConfig struct {
	VpcID            string   `json:"vpcId"`
	SubnetIDs        []string `json:"subnetIds"`        // private subnets (2+ AZs recommended)
	SecurityGroupIDs []string `json:"securityGroupIds"` // the functions' security groups (egress to Perforce, Swarm, the endpoints)
	// AllFunctions places every function in the VPC; false = fetch only
	// (the one that talks to Perforce).
	AllFunctions bool `json:"allFunctions,omitempty"`
	// CreateEndpoints: the stack creates the VPC endpoints the placed
	// functions need (gateway: DynamoDB, S3; interface: SQS, Secrets Manager,
	// KMS with a key, Bedrock runtime for review), so no AWS call needs a NAT.
	// False when the VPC already has them (private DNS names would clash).
	CreateEndpoints bool `json:"createEndpoints,omitempty"`
	// RouteTableIDs of the subnets, for the gateway endpoints (createEndpoints).
	RouteTableIDs []string `json:"routeTableIds,omitempty"`
}

// isLocal reports whether the environment targets the emulator: resources are
// destroyable, no PITR, no S3 access logging.
func isLocal(name string) bool { return name == "local" }

// DefaultConfig returns the Go defaults of an environment before cdk.json and
// overrides are applied.
// The default rollout SLOs (see DefaultConfig): at least DefaultValidFindingsSLO
// valid findings per job, at most DefaultDroppedFindingsSLO dropped findings
// per job, each averaged over an hour.
const (
	DefaultValidFindingsSLO   = 0.1
	DefaultDroppedFindingsSLO = 0.5
)

// DefaultAcceptanceAlarmThreshold is acceptanceAlarmThreshold unset: page below 30 % accepted over a day
// (docs/operating.md#acceptancealarm), a placeholder until real traffic
// says what a team's normal is (published precision of AI reviewers runs
// 0.24–0.75, issue 32). The promote gate's defaults are package outcome's.
const DefaultAcceptanceAlarmThreshold = 0.3

// DefaultAcceptanceAlarmMinSample is acceptanceAlarmMinSample unset: a day
// with fewer judged findings does not page, as a share of a handful of
// reactions is noise (one dismissed finding is 0 % accepted). A
// placeholder like the threshold, below the promote gate's sample
// (outcome.DefaultMinSample) because it is one day's, not a canary's.
const DefaultAcceptanceAlarmMinSample = 20

func DefaultConfig(name string) EnvConfig {
	c := EnvConfig{
		Architecture:            "arm64",
		LeaseSeconds:            60,
		MaxAttempts:             5,
		MaxConcurrency:          StageConcurrency{Fetch: 2, LLM: 2, Notify: 2},
		BatchSize:               1,
		DepotAllowList:          []string{},
		P4Bin:                   "/opt/bin/p4",
		P4User:                  "criticizer",
		P4TimeoutSeconds:        30,
		P4ServerRole:            "standard",
		LLMProvider:             "openai",
		LLMModel:                "gpt-4o-mini",
		LLMTimeoutSeconds:       45,
		ReviewTimeoutSeconds:    900,
		SMTPPort:                587,
		SMTPFrom:                "criticizer@example.com",
		SMTPTLS:                 "starttls",
		SMTPTimeoutSeconds:      10,
		EmailProvider:           "smtp",
		RedactEmails:            true,
		ClockSkewSeconds:        2,
		RetentionDays:           30,
		UniquenessRetentionDays: DefaultUniquenessRetentionDays,
		APIRateLimit:            50,
		APIBurstLimit:           100,
		ReplayWindowSeconds:     300,
		LogLevel:                "info",
		LogRetentionDays:        30,
		AccessLogRetentionDays:  365,
		SweepSchedule:           "rate(1 minute)",

		AcceptanceAlarmThreshold: DefaultAcceptanceAlarmThreshold,
		AcceptanceAlarmMinSample: DefaultAcceptanceAlarmMinSample,
		AcceptanceMargin:         outcome.DefaultMargin,
		AcceptanceMinSample:      outcome.DefaultMinSample,

		APIGatewayCloudWatchRole: "create",
	}
	if name != "local" {
		// The rollout SLOs of the stable prompt (cdk.json states them per
		// environment too): placeholders from the stand-in eval (`make eval`:
		// 0.21 valid and 0.00 dropped findings per review), to tune with
		// real traffic (docs/operating.md#rollout-slos).
		c.ValidFindingsSLO = map[string]float64{result.StablePromptVersion: DefaultValidFindingsSLO}
		c.DroppedFindingsSLO = map[string]float64{result.StablePromptVersion: DefaultDroppedFindingsSLO}
	}
	switch name {
	case "local":
		c.Architecture = "x86_64"
		c.LeaseSeconds = 10
		c.P4TimeoutSeconds = 8
		c.LLMTimeoutSeconds = 8
		c.ReviewTimeoutSeconds = 30
		c.SMTPTimeoutSeconds = 3
		c.SendCompletionWindowSeconds = 60 // a stalled DATA reply in the tests outlives the client by less
		c.DepotAllowList = []string{"//depot/projectA/...", "//depot/libs/..."}
		c.P4Port = "localhost:1666"
		c.LLMEndpoint = "http://127.0.0.1:8089"
		c.LLMModel = "local-test-model"
		c.SMTPHost = "127.0.0.1"
		c.SMTPPort = 2525
		c.SMTPFrom = "criticizer@localhost"
		c.RecipientDomains = []string{"example.com"} // the stand-in depot's users
		c.SMTPTLS = "none"
		c.LogLevel = "debug"
		c.LogRetentionDays = 1
		c.APIGatewayCloudWatchRole = "existing"
	case "dev":
		c.LogLevel = "debug"
		c.LogRetentionDays = 14
	case "prod":
		c.LogRetentionDays = 90
	}
	return c
}

// LoadConfig resolves the environment name and its configuration from the
// construct tree's context: Go defaults < cdk.json environments.<env> < overrides.
func LoadConfig(node constructs.Node) (string, EnvConfig, error) {
	name := defaultEnv
	if v, ok := node.TryGetContext(strPtr(ctxEnv)).(string); ok && v != "" {
		name = v
	}
	if !contains(knownEnvs, name) {
		return "", EnvConfig{}, fmt.Errorf("context %q: unknown environment %q (want one of %s)", ctxEnv, name, strings.Join(knownEnvs, ", "))
	}
	cfg := DefaultConfig(name)

	if raw := node.TryGetContext(strPtr(ctxEnvironments)); raw != nil {
		envs := map[string]json.RawMessage{}
		if err := decodeContext(raw, &envs); err != nil {
			return "", cfg, fmt.Errorf("context %q: %w", ctxEnvironments, err)
		}
		for k := range envs {
			if !contains(knownEnvs, k) {
				return "", cfg, fmt.Errorf("context %q: unknown environment %q", ctxEnvironments, k)
			}
		}
		if e, ok := envs[name]; ok {
			if err := strictUnmarshal(e, &cfg); err != nil {
				return "", cfg, fmt.Errorf("context %s.%s: %w", ctxEnvironments, name, err)
			}
		}
	}
	if raw := node.TryGetContext(strPtr(ctxOverrides)); raw != nil {
		if err := decodeContext(raw, &cfg); err != nil {
			return "", cfg, fmt.Errorf("context %q: %w", ctxOverrides, err)
		}
	}
	cfg.isLocal = isLocal(name)
	return name, cfg, errors.Join(cfg.Validate(), cfg.validateReview(), cfg.validateLLM())
}

var retentionDays = map[int]awslogs.RetentionDays{
	1: awslogs.RetentionDays_ONE_DAY, 3: awslogs.RetentionDays_THREE_DAYS, 5: awslogs.RetentionDays_FIVE_DAYS,
	7: awslogs.RetentionDays_ONE_WEEK, 14: awslogs.RetentionDays_TWO_WEEKS, 30: awslogs.RetentionDays_ONE_MONTH,
	60: awslogs.RetentionDays_TWO_MONTHS, 90: awslogs.RetentionDays_THREE_MONTHS, 120: awslogs.RetentionDays_FOUR_MONTHS,
	150: awslogs.RetentionDays_FIVE_MONTHS, 180: awslogs.RetentionDays_SIX_MONTHS, 365: awslogs.RetentionDays_ONE_YEAR,
	400: awslogs.RetentionDays_THIRTEEN_MONTHS, 545: awslogs.RetentionDays_EIGHTEEN_MONTHS, 731: awslogs.RetentionDays_TWO_YEARS,
	1096: awslogs.RetentionDays_THREE_YEARS, 1827: awslogs.RetentionDays_FIVE_YEARS, 2192: awslogs.RetentionDays_SIX_YEARS,
	2557: awslogs.RetentionDays_SEVEN_YEARS, 2922: awslogs.RetentionDays_EIGHT_YEARS, 3288: awslogs.RetentionDays_NINE_YEARS,
	3653: awslogs.RetentionDays_TEN_YEARS,
}

func allowedRetentions() string {
	ks := make([]int, 0, len(retentionDays))
	for k := range retentionDays {
		ks = append(ks, k)
	}
	sort.Ints(ks)
	return strings.Trim(fmt.Sprint(ks), "[]")
}

// decodeContext lays a context value (a JSON object, or a string holding one,
// as `cdk -c key='{...}'` passes it) over dst, rejecting unknown keys.
func decodeContext(v any, dst any) error {
	var b []byte
	if s, ok := v.(string); ok {
		b = []byte(s)
	} else {
		var err error
		if b, err = json.Marshal(v); err != nil {
			return err
		}
	}
	return strictUnmarshal(b, dst)
}

func strictUnmarshal(b []byte, dst any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	return d.Decode(dst)
}

var (
	rateRe = regexp.MustCompile(`^rate\(([1-9][0-9]*) (minute|minutes|hour|hours|day|days)\)$`)
	cronRe = regexp.MustCompile(`^cron\(\S+( \S+){5}\)$`)
)

// validSchedule checks an EventBridge schedule expression the way the service
// does (the emulator accepts anything): rate with a singular unit for 1 only.
func validSchedule(s string) bool {
	if m := rateRe.FindStringSubmatch(s); m != nil {
		return (m[1] == "1") == !strings.HasSuffix(m[2], "s")
	}
	return cronRe.MatchString(s)
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

func strPtr(s string) *string { return &s }

// modelRollout is the model canary as the llm function reads it
// (LLM_MODEL_CANDIDATE[_PERCENT]): validated, and granted to, the same way.
func (c EnvConfig) modelRollout() result.ModelRollout {
	return result.ModelRollout{Candidate: c.LLMModelCandidate, Percent: c.LLMModelCandidatePercent}
}
