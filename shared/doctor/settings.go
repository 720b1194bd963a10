package doctor

import (
	"log/slog"

	"github.com/criticizer/criticizer/shared/config"
	"github.com/criticizer/criticizer/shared/depot"
	"github.com/criticizer/criticizer/shared/llm"
	"github.com/criticizer/criticizer/shared/p4"
	"github.com/criticizer/criticizer/shared/settings"
	"github.com/criticizer/criticizer/shared/smtpmail"
	"github.com/criticizer/criticizer/shared/swarm"
)

// Settings are the doctor function's: the settings of the functions whose
// outside systems it checks, read by their own loaders, so the checks meet
// each system as those functions do.
type Settings struct {
	P4        p4.Settings // the fetch function's
	AllowList *depot.AllowList
	Swarm     swarm.Settings // the fetch function's (ForAuthors)
	LLM       llm.Settings   // the llm function's
	// ContextTokens is LLM_CONTEXT_TOKENS (0: the model family table's).
	ContextTokens int
	// Provider and From are EMAIL_PROVIDER and SMTP_FROM; SMTP and
	// SMTPSecretID the relay (smtp only), as the notify function reads them.
	Provider, From string
	SMTP           smtpmail.Config
	SMTPSecretID   string
}

// SettingsFromEnv reads the doctor function's settings; problems are
// collected in r. log receives the allow-list's warnings.
func SettingsFromEnv(r *config.Reader, log *slog.Logger) Settings {
	s := Settings{P4: p4.SettingsFromEnv(r), Swarm: swarm.SettingsFromEnv(r, swarm.ForAuthors), LLM: llm.SettingsFromEnv(r),
		ContextTokens: r.Int(settings.LLMContextTokens), Provider: r.OneOf(settings.EmailProvider), From: r.String(settings.SMTPFrom)}
	if spec := r.String(settings.DepotAllowList); spec != "" {
		al, err := depot.ParseAllowList(spec, log)
		r.Fail(err)
		s.AllowList = al
	}
	if s.Provider == "smtp" {
		s.SMTP, s.SMTPSecretID = smtpmail.SettingsFromEnv(r, s.From)
	}
	return s
}
