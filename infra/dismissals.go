package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/jsii-runtime-go"
)

// The noise filter (shared/outcome, docs/swarm-comments.md "Reactions"):
// a finding kind dismissed dismissThreshold times with no acceptance under
// a depot path scope dismissScopeDepth directories deep is withheld there.
// A review rules file's dismissal_suppression overrides the threshold for
// its paths.
const (
	defaultDismissThreshold  = 3 // outcome.DismissThreshold
	defaultDismissScopeDepth = 1 // //depot/<first dir>/...
)

func validateDismissals(c EnvConfig, p *problems) {
	if n := c.DismissThreshold; n < 0 || n > 100 {
		p.add("dismissThreshold %d: want 0 (%d) or 1..100 dismissals", n, defaultDismissThreshold)
	}
	if d := c.DismissScopeDepth; d < 0 || d > 5 {
		p.add("dismissScopeDepth %d: want 0 (%d: //depot/<first dir>/...) or 1..5 directories", d, defaultDismissScopeDepth)
	}
}

// wireDismissals gives the notify function the noise filter's settings.
func wireDismissals(cfg EnvConfig, notify awslambda.Function) {
	n, d := cfg.DismissThreshold, cfg.DismissScopeDepth
	if n == 0 {
		n = defaultDismissThreshold
	}
	if d == 0 {
		d = defaultDismissScopeDepth
	}
	notify.AddEnvironment(jsii.String("DISMISS_THRESHOLD"), itoa(n), nil)
	notify.AddEnvironment(jsii.String("DISMISS_SCOPE_DEPTH"), itoa(d), nil)
}
