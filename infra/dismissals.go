package main

import (
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/jsii-runtime-go"
)

// The noise filter (shared/outcome Policy, docs/swarm-comments.md
// "Reactions"): a finding kind dismissed dismissThreshold times, by at
// least dismissMinPeople people with a say across dismissMinReviews
// reviews, with no acceptance under a depot path scope dismissScopeDepth
// directories deep, is withheld there; never one at or above the gate
// (swarmGateSeverity, high when off). A review rules file's
// dismissal_suppression overrides the threshold for its paths. Their
// ranges and defaults are the declaration's (shared/settings;
// validateDeclared checks cdk.json against it).

// wireDismissals gives every function that reads the one policy (the llm
// stage withholds by it when it decides a review, notify records the
// scope of what it posts, the sweeper and the webhook record standing by it, the
// digest and the job page list by it) the same settings; one left 0 or
// empty is unset, so the function takes its declared default.
func wireDismissals(cfg EnvConfig, fns ...awslambda.Function) {
	vars := map[string]string{}
	set := func(name string, n int) {
		if n > 0 {
			vars[name] = *itoa(n)
		}
	}
	set("DISMISS_THRESHOLD", cfg.DismissThreshold)
	set("DISMISS_SCOPE_DEPTH", cfg.DismissScopeDepth)
	set("DISMISS_MIN_PEOPLE", cfg.DismissMinPeople)
	set("DISMISS_MIN_REVIEWS", cfg.DismissMinReviews)
	if len(cfg.DismissDeciders) > 0 {
		vars["DISMISS_DECIDERS"] = strings.Join(cfg.DismissDeciders, ",")
	}
	if len(cfg.DismissBotLogins) > 0 {
		vars["DISMISS_BOT_LOGINS"] = strings.Join(cfg.DismissBotLogins, ",")
	}
	if cfg.DismissConfirm {
		vars["DISMISS_CONFIRM"] = "true"
	}
	for _, fn := range fns {
		if fn == nil {
			continue
		}
		for k, v := range vars {
			fn.AddEnvironment(jsii.String(k), jsii.String(v), nil)
		}
		if g := cfg.SwarmGateSeverity; g != "" && g != "off" {
			fn.AddEnvironment(jsii.String("SWARM_GATE_SEVERITY"), jsii.String(g), nil)
		}
	}
}
