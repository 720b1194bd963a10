package main

import (
	"slices"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/jsii-runtime-go"

	"github.com/criticizer/criticizer/shared/delivery"
	"github.com/criticizer/criticizer/shared/digest"
	"github.com/criticizer/criticizer/shared/recipients"
	"github.com/criticizer/criticizer/shared/settings"
)

// DigestConfig is the weekly digest (shared/digest): off unless
// WeeklyDigest; then the review function records each job's week entry and
// the digest function e-mails each owner in DigestOptIn about the paths
// DigestOwners gives them, on DigestSchedule.
type DigestConfig struct {
	WeeklyDigest   bool                `json:"weeklyDigest,omitempty"`
	DigestOwners   map[string][]string `json:"digestOwners,omitempty"`
	DigestOptIn    []string            `json:"digestOptIn,omitempty"`
	DigestSchedule string              `json:"digestSchedule"` // its declared default when cdk.json gives none
}

// itemDigest: shared/digest's week entries and once-per-week rows.
const itemDigest = "DIGEST#"

// validateDigest: the owners' paths are depot path patterns, everyone who
// opted in owns a path and may receive e-mail under the recipient policy,
// and somebody did opt in.
func validateDigest(c EnvConfig, p *problems) {
	if !c.WeeklyDigest {
		return
	}
	if _, err := digest.Owners(c.DigestOwners, c.DigestOptIn); err != nil {
		p.add("digestOwners: %v", err)
	}
	if len(c.DigestOptIn) == 0 {
		p.add("weeklyDigest is on but digestOptIn is empty: name the owners who receive it")
	}
	policy, _ := recipients.Parse(c.RecipientDomains, 0)
	for _, a := range c.DigestOptIn {
		owns := false
		for _, addrs := range c.DigestOwners {
			owns = owns || slices.ContainsFunc(addrs, func(o string) bool { return delivery.Canonical(o) == delivery.Canonical(a) })
		}
		if !owns {
			p.add("digestOptIn %q owns no path in digestOwners", a)
		}
		if policy != nil && policy.Check(a) != nil {
			p.add("digestOptIn %q is outside recipientDomains", a)
		}
	}
	if s := c.DigestSchedule; !strings.HasPrefix(s, "cron(") && !strings.HasPrefix(s, "rate(") {
		p.add("digestSchedule %q: want an EventBridge cron(...) or rate(...) expression", s)
	}
}

// newDigest adds the digest function and its weekly schedule, and lets the
// review function record each review's week entry as it decides it
// (shared/decide).
func newDigest(f *functionFactory, p functionsProps, review awslambda.Function) {
	cfg := f.cfg
	if !cfg.WeeklyDigest {
		return
	}
	f.items(review, p).grant(jsii.Strings("dynamodb:PutItem"), itemDigest)
	fn := f.newFn(fnSpec{id: "DigestFunction", asset: "digest", memory: 256, timeout: 300, env: map[string]*string{
		settings.SMTPSecretID.Name: p.secrets.smtp.SecretArn(),
	}})
	g := f.items(fn, p)
	// The week's entries (one partition), the once-per-week rows; the
	// reviews' outcomes and kind tallies; SES events for a send in doubt.
	g.grant(jsii.Strings("dynamodb:Query", "dynamodb:UpdateItem"), itemDigest)
	g.grant(jsii.Strings("dynamodb:Query"), itemOutcome, itemDelivery)
	grantMail(fn, cfg, p.secrets)
	// A retried delivery of the schedule's event carries the same time, so
	// the same week; the pass sends nothing twice (shared/digest).
	newSchedule(f.stack, "DigestSchedule", "The weekly digest to depot path owners who opted in (the ISO week before the run)",
		awsevents.Schedule_Expression(jsii.String(cfg.DigestSchedule)), fn, nil)
}

// grantMail gives fn the delivery key (the outbox rows' recipients are
// named by its keyed hash) and lets it send: through the SMTP relay's login, or with SES only as
// the configured identity, only through the configuration set whose events
// feed the provider evidence (SES authorizes SendEmail on both resources).
func grantMail(fn awslambda.Function, cfg EnvConfig, sec stackSecrets) {
	readSecret(fn, settings.DeliveryKeySecretID.Name, sec.delivery)
	if cfg.EmailProvider != "ses" {
		sec.smtp.GrantRead(fn, nil)
		return
	}
	fn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions:    jsii.Strings("ses:SendEmail"),
		Resources:  &[]*string{sesARN("identity", sesIdentity(cfg)), sesARN("configuration-set", cfg.SESConfigurationSet)},
		Conditions: &map[string]any{"StringEquals": map[string]any{"ses:FromAddress": cfg.SMTPFrom}},
	}))
}
