package settings

import "fmt"

// Var is a declared variable: its name and what its setting accepts. Each
// has a handle below, typed by its kind, which shared/config's Reader takes
// (r.Int(settings.LeaseSeconds)) and infra names the variable by, so a
// misspelt variable does not compile and a kind the declaration does not
// give fails every test (the handle panics at init).
type Var struct {
	Name    string
	Accepts Accepts
}

// The handles' types, one per kind; NameVar is a name the stack sets itself
// (a *stack* row's Names).
type (
	IntVar    struct{ Var }
	NumberVar struct{ Var }
	FlagVar   struct{ Var }
	ChoiceVar struct{ Var }
	TextVar   struct{ Var }
	NameVar   struct{ Var }
)

// handled lists every handle's variable (a test checks each declared one has one).
var handled []string

// declare is the handle of variable name, declared as kind k.
func declare(name string, k Kind) Var {
	a, ok := Variable(name)
	if k < 0 { // a name the stack sets: no default or range
		a, ok = Accepts{}, StackName(name)
	}
	if !ok || k >= 0 && a.Kind != k {
		panic(fmt.Sprintf("settings: %s is not declared as that kind of value (Declared)", name))
	}
	handled = append(handled, name)
	return Var{name, a}
}

func intVar(n string) IntVar       { return IntVar{declare(n, Integer)} }
func numberVar(n string) NumberVar { return NumberVar{declare(n, Number)} }
func flagVar(n string) FlagVar     { return FlagVar{declare(n, Flag)} }
func choiceVar(n string) ChoiceVar { return ChoiceVar{declare(n, Choice)} }
func textVar(n string) TextVar     { return TextVar{declare(n, Text)} }
func nameVar(n string) NameVar     { return NameVar{declare(n, -1)} }

// The handles, in Declared's order.
var (
	LeaseSeconds                       = intVar("LEASE_SECONDS")
	MaxAttempts                        = intVar("MAX_ATTEMPTS")
	ClockSkewSeconds                   = intVar("CLOCK_SKEW_SECONDS")
	RetentionDays                      = intVar("RETENTION_DAYS")
	UniquenessRetentionDays            = intVar("UNIQUENESS_RETENTION_DAYS")
	LogLevel                           = choiceVar("LOG_LEVEL")
	CriticizerEnv                      = nameVar("CRITICIZER_ENV")
	JobsTable                          = nameVar("JOBS_TABLE")
	FetchQueueURL                      = nameVar("FETCH_QUEUE_URL")
	LLMQueueURL                        = nameVar("LLM_QUEUE_URL")
	NotifyQueueURL                     = nameVar("NOTIFY_QUEUE_URL")
	FetchDLQURL                        = nameVar("FETCH_DLQ_URL")
	LLMDLQURL                          = nameVar("LLM_DLQ_URL")
	NotifyDLQURL                       = nameVar("NOTIFY_DLQ_URL")
	RawBucket                          = nameVar("RAW_BUCKET")
	RedactedBucket                     = nameVar("REDACTED_BUCKET")
	ReplayWindowSeconds                = intVar("REPLAY_WINDOW_SECONDS")
	RecipientDomains                   = textVar("RECIPIENT_DOMAINS")
	MaxRecipients                      = intVar("MAX_RECIPIENTS")
	JobPageSecretID                    = textVar("JOB_PAGE_SECRET_ID")
	JobPageBaseURL                     = textVar("JOB_PAGE_BASE_URL")
	SwarmURL                           = textVar("SWARM_URL")
	SwarmEventsSignatureHeader         = textVar("SWARM_EVENTS_SIGNATURE_HEADER")
	SwarmEventsDeliveryHeader          = textVar("SWARM_EVENTS_DELIVERY_HEADER")
	SwarmEventsEventHeader             = textVar("SWARM_EVENTS_EVENT_HEADER")
	SwarmEventsTimestampHeader         = textVar("SWARM_EVENTS_TIMESTAMP_HEADER")
	SwarmEventsToleranceSeconds        = intVar("SWARM_EVENTS_TOLERANCE_SECONDS")
	SwarmEventsSecretID                = textVar("SWARM_EVENTS_SECRET_ID")
	WebhookSecretID                    = nameVar("WEBHOOK_SECRET_ID")
	SwarmTokenSecretID                 = nameVar("SWARM_TOKEN_SECRET_ID")
	SwarmAPISecretID                   = nameVar("SWARM_API_SECRET_ID")
	DepotAllowList                     = textVar("DEPOT_ALLOWLIST")
	P4Port                             = textVar("P4PORT")
	P4User                             = textVar("P4USER")
	P4Bin                              = textVar("P4_BIN")
	P4ServerRole                       = choiceVar("P4_SERVER_ROLE")
	P4TimeoutSeconds                   = intVar("P4_TIMEOUT_SECONDS")
	P4TrustFingerprint                 = textVar("P4TRUST_FINGERPRINT")
	P4Charset                          = textVar("P4CHARSET")
	P4Parallelism                      = intVar("P4_PARALLELISM")
	P4MaxFileBytes                     = intVar("P4_MAX_FILE_BYTES")
	RedactEmails                       = flagVar("REDACT_EMAILS")
	ConfidentialDomains                = textVar("CONFIDENTIAL_DOMAINS")
	ConfidentialCIDRs                  = textVar("CONFIDENTIAL_CIDRS")
	P4SecretID                         = nameVar("P4_SECRET_ID")
	LLMProvider                        = choiceVar("LLM_PROVIDER")
	LLMEndpoint                        = textVar("LLM_ENDPOINT")
	LLMModel                           = textVar("LLM_MODEL")
	LLMTimeoutSeconds                  = intVar("LLM_TIMEOUT_SECONDS")
	QueueVisibilitySeconds             = intVar("QUEUE_VISIBILITY_SECONDS")
	LLMRequestsPerMinute               = intVar("LLM_REQUESTS_PER_MINUTE")
	LLMTokensPerMinute                 = intVar("LLM_TOKENS_PER_MINUTE")
	LLMPricesPerMTok                   = textVar("LLM_PRICES_PER_MTOK")
	PromptPatchDrift                   = flagVar("PROMPT_PATCH_DRIFT")
	PromptCandidateVersion             = textVar("PROMPT_CANDIDATE_VERSION")
	PromptCandidatePercent             = intVar("PROMPT_CANDIDATE_PERCENT")
	LLMModelCandidate                  = textVar("LLM_MODEL_CANDIDATE")
	LLMModelCandidatePercent           = intVar("LLM_MODEL_CANDIDATE_PERCENT")
	LLMModelCandidatePricesPerMTok     = textVar("LLM_MODEL_CANDIDATE_PRICES_PER_MTOK")
	LLMModelCandidateRequestsPerMinute = intVar("LLM_MODEL_CANDIDATE_REQUESTS_PER_MINUTE")
	LLMModelCandidateTokensPerMinute   = intVar("LLM_MODEL_CANDIDATE_TOKENS_PER_MINUTE")
	LLMMaxOutputTokens                 = intVar("LLM_MAX_OUTPUT_TOKENS")
	LLMResponseFormat                  = choiceVar("LLM_RESPONSE_FORMAT")
	LLMContextTokens                   = intVar("LLM_CONTEXT_TOKENS")
	LLMBytesPerToken                   = numberVar("LLM_BYTES_PER_TOKEN")
	LLMParallelism                     = intVar("LLM_PARALLELISM")
	ReviewMaxFiles                     = intVar("REVIEW_MAX_FILES")
	ReviewMaxBytes                     = intVar("REVIEW_MAX_BYTES")
	ReviewMaxFileBytes                 = intVar("REVIEW_MAX_FILE_BYTES")
	ReviewMaxChunkFiles                = intVar("REVIEW_MAX_CHUNK_FILES")
	ReviewMaxTokens                    = intVar("REVIEW_MAX_TOKENS")
	ReviewDailyTokenBudget             = intVar("REVIEW_DAILY_TOKEN_BUDGET")
	ReviewRules                        = textVar("REVIEW_RULES")
	LLMSecretID                        = nameVar("LLM_SECRET_ID")
	EmailProvider                      = choiceVar("EMAIL_PROVIDER")
	SMTPFrom                           = textVar("SMTP_FROM")
	SESConfigurationSet                = textVar("SES_CONFIGURATION_SET")
	SMTPHost                           = textVar("SMTP_HOST")
	SMTPPort                           = intVar("SMTP_PORT")
	SMTPTLS                            = choiceVar("SMTP_TLS")
	SMTPTimeoutSeconds                 = intVar("SMTP_TIMEOUT_SECONDS")
	SMTPLookupURL                      = textVar("SMTP_LOOKUP_URL")
	SendCompletionWindowSeconds        = intVar("SEND_COMPLETION_WINDOW_SECONDS")
	NotifyChannels                     = textVar("NOTIFY_CHANNELS")
	SwarmCommentWindowSeconds          = intVar("SWARM_COMMENT_WINDOW_SECONDS")
	SwarmMaxInlineComments             = intVar("SWARM_MAX_INLINE_COMMENTS")
	SwarmEmailParticipants             = flagVar("SWARM_EMAIL_PARTICIPANTS")
	SwarmGateSeverity                  = textVar("SWARM_GATE_SEVERITY")
	SMTPSecretID                       = nameVar("SMTP_SECRET_ID")
	DeliveryKeySecretID                = nameVar("DELIVERY_KEY_SECRET_ID")
	RawArtifactTTLDays                 = intVar("RAW_ARTIFACT_TTL_DAYS")
	RedactedArtifactTTLDays            = intVar("REDACTED_ARTIFACT_TTL_DAYS")
	DismissThreshold                   = intVar("DISMISS_THRESHOLD")
	DismissScopeDepth                  = intVar("DISMISS_SCOPE_DEPTH")
	WeeklyDigest                       = flagVar("WEEKLY_DIGEST")
	DigestOwners                       = textVar("DIGEST_OWNERS")
	DigestOptIn                        = textVar("DIGEST_OPT_IN")
	DismissMinPeople                   = intVar("DISMISS_MIN_PEOPLE")
	DismissMinReviews                  = intVar("DISMISS_MIN_REVIEWS")
	DismissDeciders                    = textVar("DISMISS_DECIDERS")
	DismissBotLogins                   = textVar("DISMISS_BOT_LOGINS")
	DismissConfirm                     = flagVar("DISMISS_CONFIRM")
)
