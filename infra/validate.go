package main

import (
	"fmt"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// problems collects every invalid setting of an environment, so one synth
// reports them all instead of the first.
type problems []string

func (p *problems) add(format string, a ...any) { *p = append(*p, fmt.Sprintf(format, a...)) }

// validators are the per-concern checks Validate runs; each names the
// settings it rejects. A new setting gets its check in the validator of the
// concern it belongs to (or a new one appended here).
var validators = []func(EnvConfig, *problems){
	validateRuntime,
	validateQueues,
	validateP4,
	validateLLM,
	validateEmail,
	validateSwarm,
	validateRedaction,
	validateAPI,
	validateAlarms,
	validateLogs,
}

// Validate rejects settings AWS would reject at deploy time, or that would make
// the pipeline's timing contract meaningless.
func (c EnvConfig) Validate() error {
	var p problems
	for _, v := range validators {
		v(c, &p)
	}
	if len(p) > 0 {
		sort.Strings(p)
		return fmt.Errorf("invalid environment config: %s", strings.Join(p, "; "))
	}
	return nil
}

// validateRuntime: architecture, the lease and the clocks and retention that
// depend on it.
func validateRuntime(c EnvConfig, p *problems) {
	if c.Architecture != "arm64" && c.Architecture != "x86_64" {
		p.add("architecture %q: want arm64 or x86_64", c.Architecture)
	}
	if c.LeaseSeconds < 1 || c.LeaseSeconds > 900 {
		p.add("leaseSeconds %d: want 1..900 (it is also the function timeout)", c.LeaseSeconds)
	}
	if c.ClockSkewSeconds < 0 || c.ClockSkewSeconds*2 >= c.LeaseSeconds {
		p.add("clockSkewSeconds %d: want 0..(leaseSeconds/2)-1", c.ClockSkewSeconds)
	}
	if c.RetentionDays < 1 || c.RetentionDays > 30 {
		p.add("retentionDays %d: want 1..30 (spec retention: at most 30 days)", c.RetentionDays)
	}
	if !validSchedule(c.SweepSchedule) {
		p.add("sweepSchedule %q: want rate(<n> minute[s]|hour[s]|day[s]) or cron(<6 fields>)", c.SweepSchedule)
	}
}

// validateQueues: the attempt budget and rule LC-5's W per stage against the
// event source mapping's batch size.
func validateQueues(c EnvConfig, p *problems) {
	if c.MaxAttempts < 1 {
		p.add("maxAttempts %d: want >= 1", c.MaxAttempts)
	}
	perStage := map[string]int{"fetch": c.MaxConcurrency.Fetch, "llm": c.MaxConcurrency.LLM, "notify": c.MaxConcurrency.Notify}
	for stage, n := range perStage {
		if n < 2 || n > 1000 {
			p.add("maxConcurrency.%s %d: want 2..1000", stage, n)
		}
	}
	if c.BatchSize < 1 || c.BatchSize > 10 {
		p.add("batchSize %d: want 1..10", c.BatchSize)
		return
	}
	for stage, n := range perStage {
		if n%c.BatchSize != 0 || n/c.BatchSize < 2 {
			p.add("maxConcurrency.%s %d: want a multiple of batchSize (%d) and at least 2×batchSize (ESM MaximumConcurrency = W / batchSize >= 2)", stage, n, c.BatchSize)
		}
	}
}

// validateP4: the Perforce connection, the p4 layer and the depot allow-list.
func validateP4(c EnvConfig, p *problems) {
	for _, e := range c.DepotAllowList {
		if !strings.HasPrefix(e, "//") {
			p.add("depotAllowList entry %q: want a depot path starting with //", e)
		}
		if strings.Contains(e, ",") {
			p.add("depotAllowList entry %q: must not contain a comma", e)
		}
	}
	if c.P4Bin == "" {
		p.add("p4Bin is empty")
	}
	if c.P4Port == "" {
		p.add("p4Port is empty")
	}
	if c.P4User == "" {
		p.add("p4User is empty")
	}
	if c.P4TimeoutSeconds < 1 || c.P4TimeoutSeconds >= c.LeaseSeconds {
		p.add("p4TimeoutSeconds %d: want 1..leaseSeconds-1 (%d)", c.P4TimeoutSeconds, c.LeaseSeconds-1)
	}
	if c.P4Parallelism < 0 {
		p.add("p4Parallelism %d: want >= 0", c.P4Parallelism)
	}
	if !c.isLocal && c.P4LayerPath == "" {
		p.add("p4LayerPath is empty: every non-local environment needs the p4 layer (make p4-layer P4=/path/to/p4, then set p4LayerPath to build/p4-layer)")
	} else if c.P4LayerPath != "" {
		if st, err := os.Stat(filepath.Join(c.P4LayerPath, "bin", "p4")); err != nil || st.IsDir() {
			p.add("p4LayerPath %q: no bin/p4 in it (make p4-layer P4=/path/to/p4 stages it)", c.P4LayerPath)
		}
	}
}

// validateLLM: the provider, its endpoint and model, the call timeout and the
// prompt canary.
func validateLLM(c EnvConfig, p *problems) {
	if c.LLMTimeoutSeconds < 1 || c.LLMTimeoutSeconds >= c.LeaseSeconds {
		p.add("llmTimeoutSeconds %d: want 1..leaseSeconds-1 (%d)", c.LLMTimeoutSeconds, c.LeaseSeconds-1)
	}
	switch c.LLMProvider {
	case "openai", "anthropic":
		if u, err := url.Parse(c.LLMEndpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			p.add("llmEndpoint %q: want the provider's http(s) base URL, e.g. https://api.openai.com", c.LLMEndpoint)
		} else if strings.Trim(u.Path, "/") != "" || u.RawQuery != "" {
			p.add("llmEndpoint %q: want a base URL without a path (the client appends the API path, e.g. /v1/chat/completions)", c.LLMEndpoint)
		}
	case "bedrock":
	default:
		p.add("llmProvider %q: want openai, anthropic or bedrock", c.LLMProvider)
	}
	if c.LLMModel == "" {
		p.add("llmModel is empty")
	}
	if c.PromptCandidatePercent < 0 || c.PromptCandidatePercent > 100 {
		p.add("promptCandidatePercent %d: want 0..100", c.PromptCandidatePercent)
	}
	if c.PromptCandidatePercent > 0 && c.PromptCandidateVersion == "" {
		p.add("promptCandidatePercent %d: promptCandidateVersion is empty", c.PromptCandidatePercent)
	}
}

// validateEmail: the provider (SMTP or SES) and the send timing contract.
func validateEmail(c EnvConfig, p *problems) {
	switch c.EmailProvider {
	case "smtp":
		if c.SMTPHost == "" {
			p.add("smtpHost is empty (emailProvider smtp)")
		}
	case "ses":
		if c.SESConfigurationSet == "" {
			p.add("sesConfigurationSet is empty (emailProvider ses: its events feed delivery lookups)")
		}
	default:
		p.add("emailProvider %q: want smtp or ses", c.EmailProvider)
	}
	if c.SMTPPort < 1 || c.SMTPPort > 65535 {
		p.add("smtpPort %d: out of range", c.SMTPPort)
	}
	switch c.SMTPTLS {
	case "starttls", "tls", "none":
	default:
		p.add("smtpTLS %q: want starttls, tls or none", c.SMTPTLS)
	}
	// One SMTP send takes at most 3 × smtpTimeoutSeconds (notify.MaxSendDuration):
	// it must end before the notify function does (leaseSeconds), and the
	// provider's completion window must outlast it.
	if c.SMTPTimeoutSeconds < 1 || 3*c.SMTPTimeoutSeconds >= c.LeaseSeconds {
		p.add("smtpTimeoutSeconds %d: want 1..%d: a send takes up to 3 × smtpTimeoutSeconds and must end before the notify function times out at leaseSeconds (%d)",
			c.SMTPTimeoutSeconds, (c.LeaseSeconds-1)/3, c.LeaseSeconds)
	}
	if c.SendCompletionWindowSeconds < 0 || (c.SendCompletionWindowSeconds > 0 && c.SendCompletionWindowSeconds <= 3*c.SMTPTimeoutSeconds) {
		p.add("sendCompletionWindowSeconds %d: want 0 (the provider's default) or more than 3 × smtpTimeoutSeconds (%d)", c.SendCompletionWindowSeconds, 3*c.SMTPTimeoutSeconds)
	}
}

// validateSwarm: the optional Helix Swarm base URL.
func validateSwarm(c EnvConfig, p *problems) {
	if c.SwarmURL == "" {
		return
	}
	if u, err := url.Parse(c.SwarmURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		p.add("swarmUrl %q: want an http(s) URL", c.SwarmURL)
	}
}

// validateRedaction: the redaction policy's confidential domains and networks.
func validateRedaction(c EnvConfig, p *problems) {
	for _, d := range c.ConfidentialDomains {
		if d == "" || strings.ContainsAny(d, ", @/") {
			p.add("confidentialDomains entry %q: want a bare domain", d)
		}
	}
	for _, n := range c.ConfidentialCIDRs {
		if _, err := netip.ParsePrefix(n); err != nil {
			p.add("confidentialCidrs entry %q: not a CIDR", n)
		}
	}
}

// validateAPI: the API stage's throttling and the webhook's replay window.
func validateAPI(c EnvConfig, p *problems) {
	if c.APIRateLimit < 1 || c.APIBurstLimit < 1 {
		p.add("apiRateLimit %d / apiBurstLimit %d: want >= 1", c.APIRateLimit, c.APIBurstLimit)
	}
	if c.ReplayWindowSeconds < 1 {
		p.add("replayWindowSeconds %d: want >= 1", c.ReplayWindowSeconds)
	}
}

// validateAlarms: where alarms page, and the operator role of the raw bucket.
func validateAlarms(c EnvConfig, p *problems) {
	if c.AlarmTopicArn != "" && !strings.HasPrefix(c.AlarmTopicArn, "arn:") {
		p.add("alarmTopicArn %q: want an SNS topic ARN", c.AlarmTopicArn)
	}
	if c.AlarmEmail != "" && !strings.Contains(c.AlarmEmail, "@") {
		p.add("alarmEmail %q: want an e-mail address", c.AlarmEmail)
	}
	if c.OperatorRoleArn != "" && !strings.HasPrefix(c.OperatorRoleArn, "arn:") {
		p.add("operatorRoleArn %q: want an IAM role ARN", c.OperatorRoleArn)
	}
}

// validateLogs: log level and the retention of function and access logs.
func validateLogs(c EnvConfig, p *problems) {
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		p.add("logLevel %q: want debug, info, warn or error", c.LogLevel)
	}
	if _, ok := retentionDays[c.LogRetentionDays]; !ok {
		p.add("logRetentionDays %d: not a CloudWatch Logs retention value (%s)", c.LogRetentionDays, allowedRetentions())
	}
	if c.AccessLogRetentionDays < 1 {
		p.add("accessLogRetentionDays %d: want >= 1", c.AccessLogRetentionDays)
	}
}
