package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"time"

	"github.com/criticizer/criticizer/shared/secrets"
	"github.com/criticizer/criticizer/shared/webhook"
)

// callerSecrets maps the credentials callers present to us to the stack
// outputs naming their secrets.
var callerSecrets = map[string]string{"webhook": "WebhookSecretArn", "swarm": "SwarmTokenSecretArn"}

// secretCmd rotates or revokes a caller credential (the webhook's HMAC key,
// Swarm's bearer token):
//
//	criticizer secret rotate webhook|swarm [--overlap 24h]
//	criticizer secret revoke-previous webhook|swarm
//
// rotate stores a fresh random value as the current version and records
// until when the previous one keeps verifying (--overlap 0: at once); it
// prints the new value once, for the triggers or the Swarm test definition.
// revoke-previous makes the previous value stop verifying now: the
// functions refuse it once their cache expires (webhook.KeyCacheTTL, 1 min).
func (a *app) secretCmd(ctx context.Context, args []string) error {
	const usage = "usage: criticizer secret rotate|revoke-previous webhook|swarm [--overlap DURATION]"
	if len(args) < 2 {
		return errors.New(usage)
	}
	fs := flag.NewFlagSet("secret "+args[0], flag.ContinueOnError)
	overlap := fs.Duration("overlap", secrets.DefaultOverlap, "how long the previous value keeps verifying (rotate; 0 = not at all)")
	if err := fs.Parse(reorder(args[1:])); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New(usage)
	}
	output, ok := callerSecrets[fs.Arg(0)]
	if !ok {
		return fmt.Errorf("unknown credential %q: want webhook or swarm", fs.Arg(0))
	}
	id := a.stack[output]
	if id == "" {
		return fmt.Errorf("the stack has no %s output (swarm needs swarmUrl configured)", output)
	}
	switch args[0] {
	case "rotate":
		key, err := secrets.NewCallerKey()
		if err != nil {
			return err
		}
		c, err := secrets.RotateCallerCredential(ctx, a.sm, id, key, *overlap, time.Now())
		if err != nil {
			return err
		}
		fmt.Fprintf(a.out, "new %s credential stored; the previous one verifies until %s\n%s\n", fs.Arg(0), c.PreviousValidUntil.Format(time.RFC3339), c.Key)
		return nil
	case "revoke-previous":
		vid, err := secrets.RevokePrevious(ctx, a.sm, id)
		if err != nil {
			return err
		}
		if vid == "" {
			fmt.Fprintf(a.out, "%s has no previous version: nothing to revoke\n", fs.Arg(0))
			return nil
		}
		fmt.Fprintf(a.out, "previous %s credential (version %s) revoked; refused by every function within %s\n", fs.Arg(0), vid, webhook.KeyCacheTTL)
		return nil
	}
	return errors.New(usage)
}
