package main

import (
	"regexp"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssecretsmanager"
	"github.com/aws/jsii-runtime-go"
)

// SwarmEventsConfig turns on the receiver of P4 Code Review's signed
// outbound webhooks (shared/swarmevents; docs/operating.md "Receiving P4
// Code Review webhooks"): the stack creates the shared secret the webhook
// signs with and gives the webhook function its name and the header
// names. Off by default. The header names are *unverified* guesses
// (/work/shared/reference/swarm.md "Outbound webhooks"); set them to what
// the instance's documentation names.
type SwarmEventsConfig struct {
	Enabled          bool   `json:"enabled"`
	SignatureHeader  string `json:"signatureHeader,omitempty"`
	DeliveryHeader   string `json:"deliveryHeader,omitempty"`
	EventHeader      string `json:"eventHeader,omitempty"`
	TimestampHeader  string `json:"timestampHeader,omitempty"` // "": no timestamp check
	ToleranceSeconds int    `json:"toleranceSeconds,omitempty"`
}

// itemSwarmEvent is shared/swarmevents' delivery claims, by delivery id.
const itemSwarmEvent = "SWARMEVENT#"

var headerToken = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")

// validateSwarmEvents: on only with a Swarm server; header names are HTTP
// tokens; the tolerance is what the receiver accepts.
func validateSwarmEvents(c EnvConfig, p *problems) {
	e := c.SwarmEvents
	if !e.Enabled {
		return
	}
	if c.SwarmURL == "" {
		p.add("swarmEvents.enabled needs swarmUrl: the events are about the reviews of that Swarm server")
	}
	for name, v := range map[string]string{"signatureHeader": e.SignatureHeader, "deliveryHeader": e.DeliveryHeader, "eventHeader": e.EventHeader, "timestampHeader": e.TimestampHeader} {
		if v != "" && !headerToken.MatchString(v) {
			p.add("swarmEvents.%s %q: want an HTTP header name", name, v)
		}
	}
	if t := e.ToleranceSeconds; t != 0 && (t < 30 || t > 3600) {
		p.add("swarmEvents.toleranceSeconds %d: want 0 (300) or 30..3600", t)
	}
}

// wireSwarmEvents gives the webhook function the receiver when the
// environment turns it on: the secret (generated; the operator pastes it
// into P4 Code Review's webhook), the header names, and the items it
// writes: delivery claims, and the outcome records and tallies it raises
// (reading the review's comment rows to find them).
func wireSwarmEvents(f *functionFactory, p functionsProps, fn awslambda.Function) {
	e := f.cfg.SwarmEvents
	if !e.Enabled {
		return
	}
	secret := awssecretsmanager.NewSecret(f.stack, jsii.String("SwarmEventsSecret"), &awssecretsmanager.SecretProps{
		Description:          jsii.String("Shared secret P4 Code Review signs its outbound webhooks with (swarmEvents)"),
		GenerateSecretString: &awssecretsmanager.SecretStringGenerator{PasswordLength: jsii.Number(48), ExcludePunctuation: jsii.Bool(true)},
		RemovalPolicy:        f.removal,
		EncryptionKey:        dataKey(f.stack, f.cfg),
	})
	pinID(secret, "SwarmEventsSecret")
	secret.GrantRead(fn, nil)
	or := func(v, def string) *string {
		if v == "" {
			return jsii.String(def)
		}
		return jsii.String(v)
	}
	tolerance := e.ToleranceSeconds
	if tolerance == 0 {
		tolerance = 300
	}
	for k, v := range map[string]*string{
		"SWARM_EVENTS_SECRET_ID":         secret.SecretArn(),
		"SWARM_EVENTS_SIGNATURE_HEADER":  or(e.SignatureHeader, "X-Swarm-Signature"),
		"SWARM_EVENTS_DELIVERY_HEADER":   or(e.DeliveryHeader, "X-Swarm-Delivery"),
		"SWARM_EVENTS_EVENT_HEADER":      or(e.EventHeader, "X-Swarm-Event"),
		"SWARM_EVENTS_TIMESTAMP_HEADER":  jsii.String(e.TimestampHeader),
		"SWARM_EVENTS_TOLERANCE_SECONDS": itoa(tolerance),
	} {
		fn.AddEnvironment(jsii.String(k), v, nil)
	}
	g := f.items(fn, p)
	g.grant(jsii.Strings("dynamodb:PutItem", "dynamodb:DeleteItem"), itemSwarmEvent)
	g.grant(jsii.Strings("dynamodb:Query", "dynamodb:UpdateItem"), itemOutcome)
	awscdk.NewCfnOutput(f.stack, jsii.String("SwarmEventsSecretArn"), &awscdk.CfnOutputProps{Value: secret.SecretArn()})
}
