package main

import (
	"fmt"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/criticizer/criticizer/internal/p4layer"
	"github.com/criticizer/criticizer/shared/depot"
	"github.com/criticizer/criticizer/shared/llm"
	"github.com/criticizer/criticizer/shared/p4"
)

// problems collects every invalid setting of an environment, so one synth
// reports them all instead of the first.
type problems []string

func (p *problems) add(format string, a ...any) { *p = append(*p, fmt.Sprintf(format, a...)) }

// validators are the per-concern checks Validate runs; each names the
// settings it rejects. A new setting gets its check in the validator of the
// concern it belongs to (or a new one appended here).
var validators = []func(EnvConfig, *problems){
	validateRuntime, validateQueues, validateP4, validateLLM, validateEmail, validateSwarm,
	validateRedaction, validateAPI, validateAlarms, validateLogs, validateNetwork, validateEncryption,
	validateRecipients, validateJobPage, validateRateLimits, validateGuarantees, validateNotifyChannels,
	validateSwarmNetwork, validateDeclared, validateSwarmEvents, validatePlaceholders, validateDigest, validateReview,
}

// Validate rejects settings AWS would reject at deploy time, or that would make
// the pipeline's timing contract meaningless.
func (c EnvConfig) Validate() error {
	var p problems
	for _, v := range validators {
		v(c, &p)
	}
	return p.err()
}

// err is every problem, sorted, in one error; nil for none.
func (p problems) err() error {
	if len(p) == 0 {
		return nil
	}
	sort.Strings(p)
	return fmt.Errorf("invalid environment config: %s", strings.Join(p, "; "))
}

// validateRuntime: the clock skew that depends on the lease, and the sweep
// schedule (their ranges: validateDeclared).
func validateRuntime(c EnvConfig, p *problems) {
	if c.ClockSkewSeconds*2 >= c.LeaseSeconds { // below 0: validateDeclared
		p.add("clockSkewSeconds %d: want 0..(leaseSeconds/2)-1", c.ClockSkewSeconds)
	}
	if !validSchedule(c.SweepSchedule) {
		p.add("sweepSchedule %q: want rate(<n> minute[s]|hour[s]|day[s]) or cron(<6 fields>)", c.SweepSchedule)
	}
}

// validateQueues: the attempt budget and rule LC-5's W per stage against the
// event source mapping's batch size.
func validateQueues(c EnvConfig, p *problems) {
	perStage := map[string]int{"fetch": c.MaxConcurrency.Fetch, "llm": c.MaxConcurrency.LLM, "notify": c.MaxConcurrency.Notify}
	for stage, n := range perStage {
		if n < 2 || n > 1000 {
			p.add("maxConcurrency.%s %d: want 2..1000", stage, n)
		}
	}
	if c.BatchSize < 1 || c.BatchSize > 10 {
		return // validateDeclared names it; W is checked against a valid batch size only
	}
	for stage, n := range perStage {
		if n%c.BatchSize != 0 || n/c.BatchSize < 2 {
			p.add("maxConcurrency.%s %d: want a multiple of batchSize (%d) and at least 2×batchSize (ESM MaximumConcurrency = W / batchSize >= 2)", stage, n, c.BatchSize)
		}
	}
}

// validateP4: the Perforce connection, the p4 layer and the depot allow-list.
func validateP4(c EnvConfig, p *problems) {
	// The fetch function gets the list joined by commas (DEPOT_ALLOWLIST) and
	// parses it with depot.ParseAllowList at start: synth runs that same
	// parser on that same string, so a list synth accepts is one the function
	// starts with, and one it would refuse fails here instead.
	for _, e := range c.DepotAllowList {
		if strings.ContainsAny(e, ",\n") {
			p.add("depotAllowList entry %q: must not contain a comma or newline (DEPOT_ALLOWLIST is comma-separated)", e)
		}
	}
	if _, err := depot.ParseAllowList(strings.Join(c.DepotAllowList, ","), nil); err != nil {
		p.add("depotAllowList: %v", err)
	}
	// An ssl: server is refused by p4 until its fingerprint is trusted; the
	// fetch function installs P4TRUST_FINGERPRINT with "p4 trust -i".
	if sslPortRe.MatchString(c.P4Port) && c.P4TrustFingerprint == "" {
		p.add("p4TrustFingerprint is empty: p4Port %q is an ssl: port and p4 refuses it until the server's fingerprint is trusted (ask the Perforce admin for `p4d -Gf`, or run `p4 -p %s trust` once and copy the fingerprint)", c.P4Port, c.P4Port)
	}
	if c.P4TrustFingerprint != "" {
		if err := p4.CheckTrustFingerprint(c.P4TrustFingerprint); err != nil {
			p.add("p4TrustFingerprint: %v", err)
		}
	}
	if c.P4TimeoutSeconds >= c.LeaseSeconds { // below 1: validateDeclared
		p.add("p4TimeoutSeconds %d: want 1..leaseSeconds-1 (%d)", c.P4TimeoutSeconds, c.LeaseSeconds-1)
	}
	if c.P4LayerPath != "" { // required outside local: validateDeclared
		if st, err := os.Stat(filepath.Join(c.P4LayerPath, "bin", "p4")); err != nil || st.IsDir() {
			p.add("p4LayerPath %q: no bin/p4 in it (make p4-layer P4=/path/to/p4 P4_SHA256=… stages it)", c.P4LayerPath)
		} else if err := p4layer.CheckSHA256(c.P4LayerSHA256); err != nil {
			p.add("p4LayerSha256 %q: %v; it pins the p4 client this environment runs (docs/perforce-and-swarm.md, The p4 layer)", c.P4LayerSHA256, err)
		} else if _, err := p4layer.Verify(c.P4LayerPath, c.P4LayerSHA256); err != nil {
			// The binary receives the Perforce password and runs with the
			// fetch function's credentials: only the one chosen is deployed.
			p.add("p4LayerPath: %v", err)
		}
	}
}

// validateLLM: the provider, its endpoint, model and response format, the
// call timeout and the prompt canary.
func validateLLM(c EnvConfig, p *problems) {
	f, known := llm.FamilyOf(c.LLMProvider) // an unknown provider: validateDeclared
	if rf, ok := c.Passed["llmResponseFormat"]; ok && rf != "" && known && !f.ResponseFormat {
		p.add("llmResponseFormat %v: llmProvider %s takes no response format", rf, c.LLMProvider)
	}
	if c.LLMTimeoutSeconds >= c.LeaseSeconds { // below 1: validateDeclared
		p.add("llmTimeoutSeconds %d: want 1..leaseSeconds-1 (%d)", c.LLMTimeoutSeconds, c.LeaseSeconds-1)
	}
	// An AWS family's SDK resolves the regional endpoint; llmEndpoint only overrides it.
	if known && !f.AWS && c.LLMEndpoint == "" {
		p.add("llmEndpoint is empty: llmProvider %s needs the provider's base URL, e.g. https://api.openai.com", c.LLMProvider)
	}
	if c.LLMEndpoint != "" {
		// The llm function checks LLM_ENDPOINT with this same function.
		if _, err := llm.ValidateEndpoint(c.LLMProvider, c.LLMEndpoint); err != nil {
			p.add("llmEndpoint %q: %v", c.LLMEndpoint, err)
		} else {
			checkURL(c, p, "llmEndpoint", c.LLMEndpoint)
		}
	}
	if c.PromptCandidatePercent > 0 && c.PromptCandidateVersion == "" {
		p.add("promptCandidatePercent %d: promptCandidateVersion is empty", c.PromptCandidatePercent)
	}
	// The llm function refuses the same (result.ModelRollout.Validate).
	if err := c.modelRollout().Validate(c.LLMModel); err != nil {
		p.add("llmModelCandidate: %v", err)
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
	}
	if c.SESIdentity != "" && (strings.ContainsAny(c.SESIdentity, " ,/*") || !strings.Contains(c.SESIdentity, ".")) {
		p.add("sesIdentity %q: want a domain or an e-mail address", c.SESIdentity)
	}
	if c.EmailProvider == "ses" && c.SESIdentity == "" && !strings.Contains(c.SMTPFrom, "@") {
		p.add("smtpFrom %q: want an address whose domain is the SES identity (or set sesIdentity)", c.SMTPFrom)
	}
	if c.SMTPLookupURL != "" {
		checkURL(c, p, "smtpLookupUrl", c.SMTPLookupURL)
	}
	// A relay over plain SMTP outside local carries the review in clear text.
	if c.EmailProvider == "smtp" && c.SMTPTLS == "none" && !c.isLocal && !isLoopback(c.SMTPHost) {
		p.add("smtpTLS none: outside local only a loopback smtpHost may be used without TLS (smtpHost %q)", c.SMTPHost)
	}
	// One SMTP send takes at most 3 × smtpTimeoutSeconds (smtpmail.MaxSendDuration):
	// it must end before the notify function does (leaseSeconds), and the
	// provider's completion window must outlast it.
	if 3*c.SMTPTimeoutSeconds >= c.LeaseSeconds { // below 1: validateDeclared
		p.add("smtpTimeoutSeconds %d: want 1..%d: a send takes up to 3 × smtpTimeoutSeconds and must end before the notify function times out at leaseSeconds (%d)",
			c.SMTPTimeoutSeconds, (c.LeaseSeconds-1)/3, c.LeaseSeconds)
	}
	if c.SendCompletionWindowSeconds > 0 && c.SendCompletionWindowSeconds <= 3*c.SMTPTimeoutSeconds { // below 0: validateDeclared
		p.add("sendCompletionWindowSeconds %d: want 0 (the provider's default) or more than 3 × smtpTimeoutSeconds (%d)", c.SendCompletionWindowSeconds, 3*c.SMTPTimeoutSeconds)
	}
}

// validateSwarm: the optional Helix Swarm base URL.
func validateSwarm(c EnvConfig, p *problems) {
	if c.SwarmURL != "" {
		checkURL(c, p, "swarmUrl", c.SwarmURL)
	}
}

// checkURL: raw is an http(s) URL, and an http:// one outside local only to
// a loopback address (the staging-shaped run on the emulator): credentials
// and code would cross the network in clear text.
func checkURL(c EnvConfig, p *problems, setting, raw string) {
	switch u, err := url.Parse(raw); {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		p.add("%s %q: want an http(s) URL", setting, raw)
	case u.Scheme == "http" && !c.isLocal && !isLoopback(u.Hostname()):
		p.add("%s %q: http:// outside local is allowed only to a loopback address; use https://", setting, raw)
	}
}

// isLoopback: "localhost" or a loopback IP literal (no DNS at synth).
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	a, err := netip.ParseAddr(strings.Trim(host, "[]"))
	return err == nil && a.IsLoopback()
}

// sslPortRe matches the P4PORT transports that use SSL (ssl:, ssl4:, ssl6:,
// ssl46:, ssl64:).
var sslPortRe = regexp.MustCompile(`^ssl(4|6|46|64)?:`)

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

// validateAPI: the API Gateway CloudWatch role (the stage's throttling
// limits are checked against their declaration, validateDeclared).
func validateAPI(c EnvConfig, p *problems) {
	switch r := c.APIGatewayCloudWatchRole; {
	case r == "create" || r == "existing":
	case iamRoleArnRe.MatchString(r):
	default:
		p.add("apiGatewayCloudWatchRole %q: want create, existing or an IAM role ARN", r)
	}
}

var iamRoleArnRe = regexp.MustCompile(`^arn:aws[a-z-]*:iam::[0-9]{12}:role/[\w+=,.@/-]+$`)

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
	if _, ok := retentionDays[c.LogRetentionDays]; !ok {
		p.add("logRetentionDays %d: not a CloudWatch Logs retention value (%s)", c.LogRetentionDays, allowedRetentions())
	}
}

var kmsKeyRe = regexp.MustCompile(`^arn:aws[a-z-]*:kms:[a-z0-9-]+:[0-9]{12}:key/[0-9a-f-]{36}$`)

// awsID: an EC2 resource ID of the kind ("vpc", "subnet", …): 8 or 17 hex digits.
func awsID(kind, id string) bool {
	return regexp.MustCompile(`^` + kind + `-[0-9a-f]{8}([0-9a-f]{9})?$`).MatchString(id)
}

// validateNetwork: the optional VPC placement, by ID only (no lookups).
func validateNetwork(c EnvConfig, p *problems) {
	v := c.VPC
	if v == nil {
		return
	}
	if c.isLocal {
		p.add("vpc: not supported in local (the emulator runs functions as host processes)")
		return
	}
	if !awsID("vpc", v.VpcID) {
		p.add("vpc.vpcId %q: want vpc-<8 or 17 hex digits>", v.VpcID)
	}
	ids := func(name, kind string, list []string, required bool) {
		if required && len(list) == 0 {
			p.add("vpc.%s is empty", name)
		}
		for _, id := range list {
			if !awsID(kind, id) {
				p.add("vpc.%s entry %q: not an ID of that kind", name, id)
			}
		}
	}
	ids("subnetIds", "subnet", v.SubnetIDs, true)
	ids("securityGroupIds", "sg", v.SecurityGroupIDs, true)
	ids("routeTableIds", "rtb", v.RouteTableIDs, v.CreateEndpoints)
}

// validateEncryption: the optional customer-managed KMS key.
func validateEncryption(c EnvConfig, p *problems) {
	if c.KMSKey != "" && c.KMSKey != "create" && !kmsKeyRe.MatchString(c.KMSKey) {
		p.add("kmsKey %q: want create or a KMS key ARN (arn:aws:kms:<region>:<account>:key/<id>)", c.KMSKey)
	}
}
