package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/constructs-go/constructs/v10"
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
	// P4TrustFingerprint: the server's SSL fingerprint for ssl: ports (P4TRUST).
	P4TrustFingerprint string `json:"p4TrustFingerprint,omitempty"`
	// P4Charset for non-unicode servers (P4CHARSET), e.g. "utf8". Empty = unset.
	P4Charset string `json:"p4Charset,omitempty"`
	// P4Parallelism bounds concurrent p4 prints per job. 0 = the fetch default.
	P4Parallelism int `json:"p4Parallelism,omitempty"`

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
	// LLMTimeoutSeconds bounds one LLM call; must be below LeaseSeconds. Default 45, local 8.
	LLMTimeoutSeconds int `json:"llmTimeoutSeconds"`
	// Review holds the review function's optional limits (infra/settings.go).
	Review ReviewSettings `json:"review,omitempty"`

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

	// Redaction policy, used by the fetch stage AND the review-stage guard.
	RedactEmails        bool     `json:"redactEmails"`
	ConfidentialDomains []string `json:"confidentialDomains,omitempty"`
	ConfidentialCIDRs   []string `json:"confidentialCidrs,omitempty"`

	// ClockSkewSeconds: the clock-skew budget between function hosts. Default 2.
	ClockSkewSeconds int `json:"clockSkewSeconds"`
	// RetentionDays: TTL (expires_at) of job, idempotency and outbox rows. Default 30.
	RetentionDays int `json:"retentionDays"`

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
}

// isLocal reports whether the environment targets the emulator: resources are
// destroyable, no PITR, no S3 access logging.
func isLocal(name string) bool { return name == "local" }

// DefaultConfig returns the Go defaults of an environment before cdk.json and
// overrides are applied.
func DefaultConfig(name string) EnvConfig {
	c := EnvConfig{
		Architecture:           "arm64",
		LeaseSeconds:           60,
		MaxAttempts:            5,
		MaxConcurrency:         StageConcurrency{Fetch: 2, LLM: 2, Notify: 2},
		BatchSize:              1,
		DepotAllowList:         []string{},
		P4Bin:                  "/opt/bin/p4",
		P4User:                 "criticizer",
		P4TimeoutSeconds:       30,
		LLMProvider:            "openai",
		LLMModel:               "gpt-4o-mini",
		LLMTimeoutSeconds:      45,
		SMTPPort:               587,
		SMTPFrom:               "criticizer@example.com",
		SMTPTLS:                "starttls",
		SMTPTimeoutSeconds:     10,
		EmailProvider:          "smtp",
		RedactEmails:           true,
		ClockSkewSeconds:       2,
		RetentionDays:          30,
		APIRateLimit:           50,
		APIBurstLimit:          100,
		ReplayWindowSeconds:    300,
		LogLevel:               "info",
		LogRetentionDays:       30,
		AccessLogRetentionDays: 365,
		SweepSchedule:          "rate(1 minute)",
	}
	switch name {
	case "local":
		c.Architecture = "x86_64"
		c.LeaseSeconds = 10
		c.P4TimeoutSeconds = 8
		c.LLMTimeoutSeconds = 8
		c.SMTPTimeoutSeconds = 3
		c.SendCompletionWindowSeconds = 60 // a stalled DATA reply in the tests outlives the client by less
		c.DepotAllowList = []string{"//depot/projectA/...", "//depot/libs/..."}
		c.P4Port = "localhost:1666"
		c.LLMEndpoint = "http://127.0.0.1:8089"
		c.LLMModel = "local-test-model"
		c.SMTPHost = "127.0.0.1"
		c.SMTPPort = 2525
		c.SMTPFrom = "criticizer@localhost"
		c.SMTPTLS = "none"
		c.LogLevel = "debug"
		c.LogRetentionDays = 1
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
	if err := cfg.Validate(); err != nil {
		return name, cfg, err
	}
	return name, cfg, cfg.Review.validate(cfg)
}

// Validate rejects settings AWS would reject at deploy time, or that would make
// the pipeline's timing contract meaningless.
func (c EnvConfig) Validate() error {
	var errs []string
	bad := func(format string, a ...any) { errs = append(errs, fmt.Sprintf(format, a...)) }
	if c.Architecture != "arm64" && c.Architecture != "x86_64" {
		bad("architecture %q: want arm64 or x86_64", c.Architecture)
	}
	if c.LeaseSeconds < 1 || c.LeaseSeconds > 900 {
		bad("leaseSeconds %d: want 1..900 (it is also the function timeout)", c.LeaseSeconds)
	}
	if c.MaxAttempts < 1 {
		bad("maxAttempts %d: want >= 1", c.MaxAttempts)
	}
	for stage, n := range map[string]int{"fetch": c.MaxConcurrency.Fetch, "llm": c.MaxConcurrency.LLM, "notify": c.MaxConcurrency.Notify} {
		if n < 2 || n > 1000 {
			bad("maxConcurrency.%s %d: want 2..1000", stage, n)
		}
	}
	if c.BatchSize < 1 || c.BatchSize > 10 {
		bad("batchSize %d: want 1..10", c.BatchSize)
	} else {
		for stage, n := range map[string]int{"fetch": c.MaxConcurrency.Fetch, "llm": c.MaxConcurrency.LLM, "notify": c.MaxConcurrency.Notify} {
			if n%c.BatchSize != 0 || n/c.BatchSize < 2 {
				bad("maxConcurrency.%s %d: want a multiple of batchSize (%d) and at least 2×batchSize (ESM MaximumConcurrency = W / batchSize >= 2)", stage, n, c.BatchSize)
			}
		}
	}
	for _, p := range c.DepotAllowList {
		if !strings.HasPrefix(p, "//") {
			bad("depotAllowList entry %q: want a depot path starting with //", p)
		}
		if strings.Contains(p, ",") {
			bad("depotAllowList entry %q: must not contain a comma", p)
		}
	}
	if c.P4Bin == "" {
		bad("p4Bin is empty")
	}
	if c.P4TimeoutSeconds < 1 || c.P4TimeoutSeconds >= c.LeaseSeconds {
		bad("p4TimeoutSeconds %d: want 1..leaseSeconds-1 (%d)", c.P4TimeoutSeconds, c.LeaseSeconds-1)
	}
	if c.LLMTimeoutSeconds < 1 || c.LLMTimeoutSeconds >= c.LeaseSeconds {
		bad("llmTimeoutSeconds %d: want 1..leaseSeconds-1 (%d)", c.LLMTimeoutSeconds, c.LeaseSeconds-1)
	}
	switch c.LLMProvider {
	case "openai", "anthropic":
		if u, err := url.Parse(c.LLMEndpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad("llmEndpoint %q: want the provider's http(s) base URL, e.g. https://api.openai.com", c.LLMEndpoint)
		} else if strings.Trim(u.Path, "/") != "" || u.RawQuery != "" {
			bad("llmEndpoint %q: want a base URL without a path (the client appends the API path, e.g. /v1/chat/completions)", c.LLMEndpoint)
		}
	case "bedrock":
	default:
		bad("llmProvider %q: want openai, anthropic or bedrock", c.LLMProvider)
	}
	if c.LLMModel == "" {
		bad("llmModel is empty")
	}
	if c.PromptCandidatePercent < 0 || c.PromptCandidatePercent > 100 {
		bad("promptCandidatePercent %d: want 0..100", c.PromptCandidatePercent)
	}
	if c.PromptCandidatePercent > 0 && c.PromptCandidateVersion == "" {
		bad("promptCandidatePercent %d: promptCandidateVersion is empty", c.PromptCandidatePercent)
	}
	if c.P4Port == "" {
		bad("p4Port is empty")
	}
	if c.P4User == "" {
		bad("p4User is empty")
	}
	if c.P4Parallelism < 0 {
		bad("p4Parallelism %d: want >= 0", c.P4Parallelism)
	}
	if !c.isLocal && c.P4LayerPath == "" {
		bad("p4LayerPath is empty: every non-local environment needs the p4 layer (make p4-layer P4=/path/to/p4, then set p4LayerPath to build/p4-layer)")
	} else if c.P4LayerPath != "" {
		if st, err := os.Stat(filepath.Join(c.P4LayerPath, "bin", "p4")); err != nil || st.IsDir() {
			bad("p4LayerPath %q: no bin/p4 in it (make p4-layer P4=/path/to/p4 stages it)", c.P4LayerPath)
		}
	}
	switch c.EmailProvider {
	case "smtp":
		if c.SMTPHost == "" {
			bad("smtpHost is empty (emailProvider smtp)")
		}
	case "ses":
		if c.SESConfigurationSet == "" {
			bad("sesConfigurationSet is empty (emailProvider ses: its events feed delivery lookups)")
		}
	default:
		bad("emailProvider %q: want smtp or ses", c.EmailProvider)
	}
	// One SMTP send takes at most 3 × smtpTimeoutSeconds (notify.MaxSendDuration):
	// it must end before the notify function does (leaseSeconds), and the
	// provider's completion window must outlast it.
	if c.SMTPTimeoutSeconds < 1 || 3*c.SMTPTimeoutSeconds >= c.LeaseSeconds {
		bad("smtpTimeoutSeconds %d: want 1..%d: a send takes up to 3 × smtpTimeoutSeconds and must end before the notify function times out at leaseSeconds (%d)",
			c.SMTPTimeoutSeconds, (c.LeaseSeconds-1)/3, c.LeaseSeconds)
	}
	if c.SendCompletionWindowSeconds < 0 || (c.SendCompletionWindowSeconds > 0 && c.SendCompletionWindowSeconds <= 3*c.SMTPTimeoutSeconds) {
		bad("sendCompletionWindowSeconds %d: want 0 (the provider's default) or more than 3 × smtpTimeoutSeconds (%d)", c.SendCompletionWindowSeconds, 3*c.SMTPTimeoutSeconds)
	}
	if c.SwarmURL != "" {
		if u, err := url.Parse(c.SwarmURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad("swarmUrl %q: want an http(s) URL", c.SwarmURL)
		}
	}
	for _, d := range c.ConfidentialDomains {
		if d == "" || strings.ContainsAny(d, ", @/") {
			bad("confidentialDomains entry %q: want a bare domain", d)
		}
	}
	for _, n := range c.ConfidentialCIDRs {
		if _, err := netip.ParsePrefix(n); err != nil {
			bad("confidentialCidrs entry %q: not a CIDR", n)
		}
	}
	if c.ClockSkewSeconds < 0 || c.ClockSkewSeconds*2 >= c.LeaseSeconds {
		bad("clockSkewSeconds %d: want 0..(leaseSeconds/2)-1", c.ClockSkewSeconds)
	}
	if c.RetentionDays < 1 || c.RetentionDays > 30 {
		bad("retentionDays %d: want 1..30 (spec retention: at most 30 days)", c.RetentionDays)
	}
	if c.APIRateLimit < 1 || c.APIBurstLimit < 1 {
		bad("apiRateLimit %d / apiBurstLimit %d: want >= 1", c.APIRateLimit, c.APIBurstLimit)
	}
	if c.AlarmTopicArn != "" && !strings.HasPrefix(c.AlarmTopicArn, "arn:") {
		bad("alarmTopicArn %q: want an SNS topic ARN", c.AlarmTopicArn)
	}
	if c.OperatorRoleArn != "" && !strings.HasPrefix(c.OperatorRoleArn, "arn:") {
		bad("operatorRoleArn %q: want an IAM role ARN", c.OperatorRoleArn)
	}
	if c.AlarmEmail != "" && !strings.Contains(c.AlarmEmail, "@") {
		bad("alarmEmail %q: want an e-mail address", c.AlarmEmail)
	}
	if c.SMTPPort < 1 || c.SMTPPort > 65535 {
		bad("smtpPort %d: out of range", c.SMTPPort)
	}
	switch c.SMTPTLS {
	case "starttls", "tls", "none":
	default:
		bad("smtpTLS %q: want starttls, tls or none", c.SMTPTLS)
	}
	if c.ReplayWindowSeconds < 1 {
		bad("replayWindowSeconds %d: want >= 1", c.ReplayWindowSeconds)
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		bad("logLevel %q: want debug, info, warn or error", c.LogLevel)
	}
	if _, ok := retentionDays[c.LogRetentionDays]; !ok {
		bad("logRetentionDays %d: not a CloudWatch Logs retention value (%s)", c.LogRetentionDays, allowedRetentions())
	}
	if c.AccessLogRetentionDays < 1 {
		bad("accessLogRetentionDays %d: want >= 1", c.AccessLogRetentionDays)
	}
	if !validSchedule(c.SweepSchedule) {
		bad("sweepSchedule %q: want rate(<n> minute[s]|hour[s]|day[s]) or cron(<6 fields>)", c.SweepSchedule)
	}
	if len(errs) > 0 {
		sort.Strings(errs)
		return fmt.Errorf("invalid environment config: %s", strings.Join(errs, "; "))
	}
	return nil
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
