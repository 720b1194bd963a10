package main

import (
	"slices"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/jsii-runtime-go"
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

// wireNotifyChannels gives the notify function its channels and, when it
// posts Swarm comments, read access to the API login (SWARM_URL it has
// already, for the review's link in the e-mail); the sweeper then gets the
// same login, URL and window, to reconcile comment rows by listing the
// review's comments as the notify stage does.
func wireNotifyChannels(cfg EnvConfig, sec stackSecrets, notify, sweeper awslambda.Function) {
	chs := cfg.notifyChannels()
	notify.AddEnvironment(jsii.String("NOTIFY_CHANNELS"), jsii.String(strings.Join(chs, ",")), nil)
	if !slices.Contains(chs, channelSwarmComments) || sec.swarmAPI == nil {
		return
	}
	notify.AddEnvironment(jsii.String("SWARM_API_SECRET_ID"), sec.swarmAPI.SecretArn(), nil)
	if cfg.SwarmEmailParticipants {
		notify.AddEnvironment(jsii.String("SWARM_EMAIL_PARTICIPANTS"), jsii.String("true"), nil)
	}
	if w := cfg.SwarmCommentWindowSeconds; w > 0 {
		notify.AddEnvironment(jsii.String("SWARM_COMMENT_WINDOW_SECONDS"), itoa(w), nil)
	}
	if m := cfg.SwarmMaxInlineComments; m > 0 {
		notify.AddEnvironment(jsii.String("SWARM_MAX_INLINE_COMMENTS"), itoa(m), nil)
	}
	sec.swarmAPI.GrantRead(notify, nil)
	sweeper.AddEnvironment(jsii.String("SWARM_URL"), jsii.String(cfg.SwarmURL), nil)
	sweeper.AddEnvironment(jsii.String("SWARM_API_SECRET_ID"), sec.swarmAPI.SecretArn(), nil)
	if w := cfg.SwarmCommentWindowSeconds; w > 0 {
		sweeper.AddEnvironment(jsii.String("SWARM_COMMENT_WINDOW_SECONDS"), itoa(w), nil)
	}
	sec.swarmAPI.GrantRead(sweeper, nil)
}
