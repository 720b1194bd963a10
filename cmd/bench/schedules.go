package main

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
)

// disableSchedules turns off the stack's EventBridge rules on the emulator,
// so no scheduled sweeper run lands in a measured one's counts.
func disableSchedules(ctx context.Context, cfg aws.Config, stack string) error {
	eb := eventbridge.NewFromConfig(cfg)
	rules, err := eb.ListRules(ctx, &eventbridge.ListRulesInput{NamePrefix: aws.String(stack)})
	if err != nil {
		return err
	}
	if len(rules.Rules) == 0 {
		return fmt.Errorf("no EventBridge rule named %s…", stack)
	}
	for _, r := range rules.Rules {
		if _, err := eb.DisableRule(ctx, &eventbridge.DisableRuleInput{Name: r.Name}); err != nil {
			return err
		}
	}
	return nil
}
