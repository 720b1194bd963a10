package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/criticizer/criticizer/shared/result"
	"github.com/criticizer/criticizer/shared/settings"
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
// What each key means, its default and what it accepts are its declaration's
// (shared/settings.Declared, rendered in docs/configuration.md), and the
// functions get it from there too (declaredEnv); this struct only decodes
// the keys the stack uses itself. A declared key with no field here is
// kept in Passed, as cdk.json gives it: adding a setting the stack only
// passes on takes its declaration alone.
type EnvConfig struct {
	Account                        string             `json:"account"`
	Region                         string             `json:"region"`
	Architecture                   string             `json:"architecture"`
	LeaseSeconds                   int                `json:"leaseSeconds"`
	MaxAttempts                    int                `json:"maxAttempts"`
	MaxConcurrency                 StageConcurrency   `json:"maxConcurrency"`
	BatchSize                      int                `json:"batchSize"`
	DepotAllowList                 []string           `json:"depotAllowList"`
	P4Bin                          string             `json:"p4Bin"`
	P4Port                         string             `json:"p4Port"`
	P4User                         string             `json:"p4User"`
	P4TimeoutSeconds               int                `json:"p4TimeoutSeconds"`
	P4LayerPath                    string             `json:"p4LayerPath"`
	P4ServerRole                   string             `json:"p4ServerRole"` // always set: fetch names an unpromoted edge shelf by it
	P4LayerSHA256                  string             `json:"p4LayerSha256,omitempty"`
	P4TrustFingerprint             string             `json:"p4TrustFingerprint,omitempty"`
	LLMProvider                    string             `json:"llmProvider"`
	LLMEndpoint                    string             `json:"llmEndpoint"`
	LLMModel                       string             `json:"llmModel"`
	PromptCandidateVersion         string             `json:"promptCandidateVersion,omitempty"`
	PromptCandidatePercent         int                `json:"promptCandidatePercent,omitempty"`
	LLMModelCandidate              string             `json:"llmModelCandidate,omitempty"`
	LLMModelCandidatePercent       int                `json:"llmModelCandidatePercent,omitempty"`
	LLMTimeoutSeconds              int                `json:"llmTimeoutSeconds"`
	ReviewTimeoutSeconds           int                `json:"reviewTimeoutSeconds"`
	LLMPricesPerMTok               string             `json:"llmPricesPerMTok,omitempty"`
	LLMModelCandidatePricesPerMTok string             `json:"llmModelCandidatePricesPerMTok,omitempty"`
	SMTPHost                       string             `json:"smtpHost"`
	SMTPPort                       int                `json:"smtpPort"`
	SMTPFrom                       string             `json:"smtpFrom"`
	SMTPTLS                        string             `json:"smtpTLS"`
	SMTPLookupURL                  string             `json:"smtpLookupUrl,omitempty"`
	SMTPTimeoutSeconds             int                `json:"smtpTimeoutSeconds"`
	EmailProvider                  string             `json:"emailProvider"`
	SESConfigurationSet            string             `json:"sesConfigurationSet,omitempty"`
	SendCompletionWindowSeconds    int                `json:"sendCompletionWindowSeconds,omitempty"`
	SwarmURL                       string             `json:"swarmUrl,omitempty"`
	SwarmPrivate                   bool               `json:"swarmPrivate,omitempty"`
	SwarmGateSeverity              string             `json:"swarmGateSeverity,omitempty"`
	NotifyChannels                 []string           `json:"notifyChannels,omitempty"`
	SwarmEvents                    SwarmEventsConfig  `json:"swarmEvents,omitzero"`
	RecipientDomains               []string           `json:"recipientDomains,omitempty"`
	RedactEmails                   bool               `json:"redactEmails"` // always set: redaction stays on unless cdk.json turns it off
	ConfidentialDomains            []string           `json:"confidentialDomains,omitempty"`
	ConfidentialCIDRs              []string           `json:"confidentialCidrs,omitempty"`
	ClockSkewSeconds               int                `json:"clockSkewSeconds"`
	RetentionDays                  int                `json:"retentionDays"`
	UniquenessRetentionDays        int                `json:"uniquenessRetentionDays"`
	ValidFindingsSLO               map[string]float64 `json:"validFindingsSlo,omitempty"`
	DroppedFindingsSLO             map[string]float64 `json:"droppedFindingsSlo,omitempty"`
	AcceptanceAlarmThreshold       float64            `json:"acceptanceAlarmThreshold"`
	AcceptanceAlarmMinSample       int                `json:"acceptanceAlarmMinSample"`
	APIRateLimit                   int                `json:"apiRateLimit"`
	APIBurstLimit                  int                `json:"apiBurstLimit"`
	ReplayWindowSeconds            int                `json:"replayWindowSeconds"`
	LogLevel                       string             `json:"logLevel"`
	LogRetentionDays               int                `json:"logRetentionDays"`
	AccessLogRetentionDays         int                `json:"accessLogRetentionDays"`
	SweepSchedule                  string             `json:"sweepSchedule"`
	AlarmTopicArn                  string             `json:"alarmTopicArn"`
	// isLocal is set by LoadConfig for the local environment (not a setting).
	isLocal             bool
	OperatorRoleArn     string `json:"operatorRoleArn,omitempty"`
	RawBucketDataEvents bool   `json:"rawBucketDataEvents,omitempty"`
	AlarmEmail          string `json:"alarmEmail,omitempty"`
	ReviewSettings
	VPC                      *VPCConfig `json:"vpc,omitempty"`
	APIGatewayCloudWatchRole string     `json:"apiGatewayCloudWatchRole"`
	KMSKey                   string     `json:"kmsKey,omitempty"`
	SESIdentity              string     `json:"sesIdentity,omitempty"`
	JobPage                  bool       `json:"jobPage,omitempty"`
	PublicBaseURL            string     `json:"publicBaseUrl,omitempty"`
	DigestConfig
	// Passed are the declared keys with no field, by key (UnmarshalJSON).
	Passed map[string]any `json:"-"`
}

// envFields is EnvConfig without its JSON methods: its fields alone.
type envFields EnvConfig

// fieldKeys are the cdk.json keys EnvConfig has a field for, embedded
// structs' included.
var fieldKeys = func() map[string]bool {
	keys := map[string]bool{}
	var add func(reflect.Type)
	add = func(t reflect.Type) {
		for f := range t.Fields() {
			if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); f.Anonymous && name == "" {
				add(f.Type)
			} else if name != "" && name != "-" {
				keys[name] = true
			}
		}
	}
	add(reflect.TypeFor[EnvConfig]())
	return keys
}()

// UnmarshalJSON lays b over c: a declared key with no field goes into
// Passed; any other key must be a field's (an unknown key is refused).
func (c *EnvConfig) UnmarshalJSON(b []byte) error {
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(b, &keys); err != nil {
		return err
	}
	for k, raw := range keys {
		if fieldKeys[k] || !settings.Key(k) {
			continue
		}
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
		if c.Passed == nil {
			c.Passed = map[string]any{}
		}
		c.Passed[k] = v
		delete(keys, k)
	}
	rest, err := json.Marshal(keys)
	if err != nil {
		return err
	}
	return strictUnmarshal(rest, (*envFields)(c))
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
func DefaultConfig(name string) EnvConfig {
	c := EnvConfig{
		MaxConcurrency:       StageConcurrency{Fetch: 2, LLM: 2, Notify: 2},
		DepotAllowList:       []string{},
		P4Bin:                "/opt/bin/p4",
		P4User:               "criticizer",
		LLMModel:             "gpt-4o-mini",
		ReviewTimeoutSeconds: 900,
		SMTPFrom:             "criticizer@example.com",
		APIRateLimit:         50,
		APIBurstLimit:        100,
		LogRetentionDays:     30,
	}
	declaredDefaults(&c)
	if name != "local" {
		// The rollout SLOs of the stable prompt (cdk.json states them per
		// environment too): placeholders from the stand-in eval (`make eval`:
		// 0.21 valid and 0.00 dropped findings per review), to tune with
		// real traffic (docs/operating.md#rollout-slos): at least 0.1 valid
		// and at most 0.5 dropped findings per job, averaged over an hour.
		c.ValidFindingsSLO = map[string]float64{result.StablePromptVersion: 0.1}
		c.DroppedFindingsSLO = map[string]float64{result.StablePromptVersion: 0.5}
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

// declaredDefaults sets each key c always holds (no omitempty) and leaves
// zero to its declared default (shared/settings), where the declaration
// has one value of its own: a number, flag or choice of a one-key setting,
// or the text a stack-only one (sweepSchedule) takes when cdk.json gives none.
func declaredDefaults(c *EnvConfig) {
	have, _ := jsonKeys(*c)
	defaults := map[string]json.RawMessage{}
	for _, s := range settings.Declared {
		if len(s.Keys) != 1 || s.Accepts.Default == "" {
			continue
		}
		if v, ok := have[s.Keys[0]]; ok && (v == 0.0 || v == "" || v == false) {
			defaults[s.Keys[0]] = json.RawMessage(s.Accepts.Default)
			if s.Accepts.Kind == settings.Choice || s.Accepts.Kind == settings.Text {
				defaults[s.Keys[0]] = json.RawMessage(strconv.Quote(s.Accepts.Default))
			}
		}
	}
	if err := decodeContext(defaults, c); err != nil {
		panic(err) // a declaration and its EnvConfig field disagree: every test fails
	}
}

// LoadConfig resolves the environment name and its configuration from the
// construct tree's context: Go defaults < cdk.json environments.<env> < overrides.
func LoadConfig(node constructs.Node) (string, EnvConfig, error) {
	name := defaultEnv
	if v, ok := node.TryGetContext(jsii.String(ctxEnv)).(string); ok && v != "" {
		name = v
	}
	if !slices.Contains(knownEnvs, name) {
		return "", EnvConfig{}, fmt.Errorf("context %q: unknown environment %q (want one of %s)", ctxEnv, name, strings.Join(knownEnvs, ", "))
	}
	cfg := DefaultConfig(name)

	if raw := node.TryGetContext(jsii.String(ctxEnvironments)); raw != nil {
		envs := map[string]json.RawMessage{}
		if err := decodeContext(raw, &envs); err != nil {
			return "", cfg, fmt.Errorf("context %q: %w", ctxEnvironments, err)
		}
		for k := range envs {
			if !slices.Contains(knownEnvs, k) {
				return "", cfg, fmt.Errorf("context %q: unknown environment %q", ctxEnvironments, k)
			}
		}
		if e, ok := envs[name]; ok {
			if err := strictUnmarshal(e, &cfg); err != nil {
				return "", cfg, fmt.Errorf("context %s.%s: %w", ctxEnvironments, name, err)
			}
		}
	}
	if raw := node.TryGetContext(jsii.String(ctxOverrides)); raw != nil {
		if err := decodeContext(raw, &cfg); err != nil {
			return "", cfg, fmt.Errorf("context %q: %w", ctxOverrides, err)
		}
	}
	cfg.isLocal = isLocal(name)
	return name, cfg, cfg.Validate()
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
	return strings.Trim(fmt.Sprint(slices.Sorted(maps.Keys(retentionDays))), "[]")
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

// modelRollout is the model canary as the llm function reads it
// (LLM_MODEL_CANDIDATE[_PERCENT]): validated, and granted to, the same way.
func (c EnvConfig) modelRollout() result.ModelRollout {
	return result.ModelRollout{Candidate: c.LLMModelCandidate, Percent: c.LLMModelCandidatePercent}
}
