package main

import (
	"encoding/json"
	"regexp"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssecretsmanager"
	"github.com/aws/jsii-runtime-go"

	"github.com/criticizer/criticizer/shared/settings"
)

// SwarmEventsConfig turns on the receiver of P4 Code Review's signed
// outbound webhooks (shared/swarmevents; docs/operating.md "Receiving P4
// Code Review webhooks"): the stack creates the shared secret the webhook
// signs with and gives the webhook function its name and the header
// names. Off by default. The header names are *unverified* guesses
// (docs/reference/swarm.md "Outbound webhooks"); set them to what
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

// swarmEventVar is one swarmEvents key, from its declaration: the webhook
// function's variable it sets and what it accepts; val "" where the key is
// left out (the declared default applies).
type swarmEventVar struct {
	key, name, val string
	accepts        settings.Accepts
}

func swarmEventsVars(e SwarmEventsConfig) (vars []swarmEventVar) {
	b, _ := json.Marshal(e)
	var given map[string]any
	_ = json.Unmarshal(b, &given)
	for _, s := range settings.Declared {
		if len(s.Keys) == 0 {
			continue
		}
		if key, ok := strings.CutPrefix(s.Keys[0], "swarmEvents."); ok {
			vars = append(vars, swarmEventVar{key, s.Vars[0], settings.EnvText(given[key]), s.Accepts})
		}
	}
	return vars
}

// validateSwarmEvents: on only with a Swarm server; header names are HTTP
// tokens; each value is one its variable's declaration accepts
// (shared/settings: the tolerance's range).
func validateSwarmEvents(c EnvConfig, p *problems) {
	e := c.SwarmEvents
	if !e.Enabled {
		return
	}
	if c.SwarmURL == "" {
		p.add("swarmEvents.enabled needs swarmUrl: the events are about the reviews of that Swarm server")
	}
	for _, v := range swarmEventsVars(e) {
		if v.val == "" {
			continue
		}
		if strings.HasSuffix(v.key, "Header") && !headerToken.MatchString(v.val) {
			p.add("swarmEvents.%s %q: want an HTTP header name", v.key, v.val)
		}
		if err := v.accepts.Check(v.val); err != nil {
			p.add("swarmEvents.%s %s (%s): %v (docs/configuration.md)", v.key, v.val, v.name, err)
		}
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
	secret := newSecret(f.stack, f.cfg, f.removal, "SwarmEventsSecret", "Shared secret P4 Code Review signs its outbound webhooks with (swarmEvents)",
		&awssecretsmanager.SecretStringGenerator{PasswordLength: jsii.Number(48), ExcludePunctuation: jsii.Bool(true)})
	readSecret(fn, settings.SwarmEventsSecretID.Name, secret)
	for _, v := range swarmEventsVars(e) {
		if v.val == "" {
			v.val = v.accepts.Default
		}
		fn.AddEnvironment(jsii.String(v.name), jsii.String(v.val), nil)
	}
	g := f.items(fn, p)
	g.grant(jsii.Strings("dynamodb:PutItem", "dynamodb:DeleteItem"), itemSwarmEvent)
	// A fate judged from the review read back: the record updated, its
	// kind's dismissal item put or deleted, in one transaction.
	g.grant(jsii.Strings("dynamodb:Query", "dynamodb:UpdateItem", "dynamodb:PutItem", "dynamodb:DeleteItem"), itemOutcome)
}
