package main

import (
	"encoding/json"
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/jsii-runtime-go"

	"github.com/criticizer/criticizer/internal/fnsettings"
)

// functionDirs maps the stack's function constructs to functions/<dir>.
var functionDirs = map[string]string{"WebhookFunction": "webhook", "FetchFunction": "fetch", "ReviewFunction": "llm",
	"NotifyFunction": "notify", "SweeperFunction": "sweeper", "SesEventsFunction": "sesevents", "JobPageFunction": "jobpage",
	"DigestFunction": "digest", "DoctorFunction": "doctor"}

// functionEnvs returns each function's environment as the template will hold
// it: plain values as strings, values resolved at deploy (a queue URL, a
// secret ARN) as "resolved-at-deploy".
func functionEnvs(stack awscdk.Stack) (map[string]map[string]string, error) {
	out := map[string]map[string]string{}
	for id, dir := range functionDirs {
		c := stack.Node().TryFindChild(jsii.String(id))
		if c == nil {
			continue
		}
		cfn, ok := c.Node().DefaultChild().(awslambda.CfnFunction)
		if !ok {
			return nil, fmt.Errorf("%s: no CfnFunction", id)
		}
		b, err := json.Marshal(stack.Resolve(cfn.Environment()))
		if err != nil {
			return nil, fmt.Errorf("%s environment: %w", id, err)
		}
		var e struct {
			Variables map[string]any `json:"Variables"`
		}
		if err := json.Unmarshal(b, &e); err != nil {
			return nil, fmt.Errorf("%s environment: %w", id, err)
		}
		env := map[string]string{}
		for k, v := range e.Variables {
			if s, ok := v.(string); ok {
				env[k] = s
			} else {
				env[k] = "resolved-at-deploy"
			}
		}
		out[dir] = env
	}
	return out, nil
}

// checkFunctionSettings runs each function's own settings loaders over the
// environment the stack gives it, at synth: a value the function would refuse
// at its cold start fails the synth instead, in the function's own words.
func checkFunctionSettings(stack awscdk.Stack) error {
	envs, err := functionEnvs(stack)
	if err != nil {
		return err
	}
	var p problems
	for dir, env := range envs {
		if _, err := fnsettings.Read(dir, env); err != nil {
			p.add("function %s: %v", dir, err)
		}
	}
	return p.err()
}
