package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/jsii-runtime-go"
)

// The noise filter (shared/outcome, docs/swarm-comments.md "Reactions"):
// a finding kind dismissed dismissThreshold times with no acceptance under
// a depot path scope dismissScopeDepth directories deep is withheld there.
// A review rules file's dismissal_suppression overrides the threshold for
// its paths. Their ranges and defaults are the declaration's
// (shared/settings; validateDeclared checks cdk.json against it).

// wireDismissals gives the notify function the noise filter's settings;
// one left 0 is unset, so the function takes its declared default.
func wireDismissals(cfg EnvConfig, notify awslambda.Function) {
	if n := cfg.DismissThreshold; n > 0 {
		notify.AddEnvironment(jsii.String("DISMISS_THRESHOLD"), itoa(n), nil)
	}
	if d := cfg.DismissScopeDepth; d > 0 {
		notify.AddEnvironment(jsii.String("DISMISS_SCOPE_DEPTH"), itoa(d), nil)
	}
}
