package evidence

import (
	"fmt"
	"strings"
	"time"

	"github.com/criticizer/criticizer/shared/config"
	"github.com/criticizer/criticizer/shared/settings"
)

// Settings say where the provider's evidence of a send is and how long a
// send may take to show up there. The notify stage and the sweeper's
// reconciler read the same settings, so they judge a send alike.
type Settings struct {
	// Provider is EMAIL_PROVIDER: "smtp" (default) or "ses".
	Provider string
	// From is SMTP_FROM, the sender address: every Message-ID carries its
	// domain, so the lookup needs it.
	From string
	// LookupURL is SMTP_LOOKUP_URL, the relay's message lookup (smtp only);
	// "" for none: an uncertain SMTP send then waits for an operator.
	LookupURL string
	// Window is SEND_COMPLETION_WINDOW_SECONDS: how long after a send
	// started the provider may still complete it (default DefaultWindow).
	Window time.Duration
}

// SettingsFromEnv reads the evidence settings; problems are collected in r.
func SettingsFromEnv(r *config.Reader) Settings {
	s := Settings{Provider: r.OneOf(settings.EmailProvider), From: r.String(settings.SMTPFrom)}
	if s.From != "" && !strings.Contains(s.From, "@") {
		r.Fail(fmt.Errorf("SMTP_FROM=%q must be an e-mail address", s.From))
	}
	if s.Provider == "smtp" {
		s.LookupURL = r.Optional(settings.SMTPLookupURL)
	}
	// 0 (the declared default) is the provider's own window.
	if s.Window = r.Seconds(settings.SendCompletionWindowSeconds); s.Window == 0 {
		s.Window = DefaultWindow(s.Provider)
	}
	return s
}

// FromDomain is the domain of From, which every deterministic Message-ID carries.
func (s Settings) FromDomain() string { return s.From[strings.LastIndexByte(s.From, '@')+1:] }
