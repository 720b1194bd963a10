package main

import (
	"slices"

	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"

	"github.com/criticizer/criticizer/shared/settings"
)

// The notify stage's channels (docs/swarm-comments.md): e-mail always, and
// optionally comments on the job's Swarm review, through the same outbox.
const (
	channelEmail         = "email"
	channelSwarmComments = "swarm-comments"
)

// notifyChannels is the environment's channel list, ["email"] when unset.
func (c EnvConfig) notifyChannels() []string {
	if len(c.NotifyChannels) == 0 {
		return []string{channelEmail}
	}
	return c.NotifyChannels
}

// validateNotifyChannels: known channels, each once; e-mail is always one
// (the review's e-mail is the promise every source gets); Swarm comments
// need the Swarm server. The comment window and the inline cap have their
// declared ranges (validateDeclared).
func validateNotifyChannels(c EnvConfig, p *problems) {
	chs := c.notifyChannels()
	for i, ch := range chs {
		switch {
		case ch != channelEmail && ch != channelSwarmComments:
			p.add("notifyChannels entry %q: want %q or %q", ch, channelEmail, channelSwarmComments)
		case slices.Contains(chs[:i], ch):
			p.add("notifyChannels names %q twice", ch)
		}
	}
	if !slices.Contains(chs, channelEmail) {
		p.add("notifyChannels %v: %q must be one of them (Swarm comments are posted beside the e-mail, not instead of it)", chs, channelEmail)
	}
	if slices.Contains(chs, channelSwarmComments) && c.SwarmURL == "" {
		p.add("notifyChannels has %q but swarmUrl is empty: set the Swarm server the comments go to", channelSwarmComments)
	}
}

// wireNotifyChannels gives the notify function, when it posts Swarm
// comments, read access to the API login; the sweeper then gets the same
// login, to reconcile comment rows by listing the review's comments as the
// notify stage does. The channels and the comments' settings reach them
// from their declarations (declaredEnv).
func wireNotifyChannels(cfg EnvConfig, sec stackSecrets, notify, sweeper awslambda.Function) {
	if !slices.Contains(cfg.notifyChannels(), channelSwarmComments) || sec.swarmAPI == nil {
		return
	}
	for _, fn := range []awslambda.Function{notify, sweeper} {
		readSecret(fn, settings.SwarmAPISecretID.Name, sec.swarmAPI)
	}
}
