package doctor

import (
	"log/slog"

	"github.com/criticizer/criticizer/shared/config"
	"github.com/criticizer/criticizer/shared/depot"
	"github.com/criticizer/criticizer/shared/llm"
	"github.com/criticizer/criticizer/shared/p4"
	"github.com/criticizer/criticizer/shared/smtpmail"
	"github.com/criticizer/criticizer/shared/swarm"
)

// Settings are those of the functions whose systems the doctor checks, read by
// their own loaders, so the checks meet each system as they do.
type Settings struct {
	P4        p4.Settings // the fetch function's
	AllowList *depot.AllowList
	Swarm     swarm.Settings // the fetch function's (ForAuthors)
	LLM       llm.Settings   // the llm function's
	// ContextTokens is LLM_CONTEXT_TOKENS (0: the model family table's).
	ContextTokens int
	// Provider, From: EMAIL_PROVIDER, SMTP_FROM; SMTP, SMTPSecretID: the relay
	// (smtp only).
	Provider, From string
	SMTP           smtpmail.Config
	SMTPSecretID   string
}

// SettingsFromEnv reads the doctor function's settings; problems are
// collected in r. log receives the allow-list's warnings.
func SettingsFromEnv(r *config.Reader, log *slog.Logger) Settings {
	s := Settings{P4: p4.SettingsFromEnv(r), Swarm: swarm.SettingsFromEnv(r, swarm.ForAuthors), LLM: llm.SettingsFromEnv(r),
		ContextTokens: r.Int("LLM_CONTEXT_TOKENS"), Provider: r.OneOf("EMAIL_PROVIDER"), From: r.String("SMTP_FROM")}
	if spec := r.String("DEPOT_ALLOWLIST"); spec != "" {
		al, err := depot.ParseAllowList(spec, log)
		r.Fail(err)
		s.AllowList = al
	}
	if s.Provider == "smtp" {
		s.SMTP, s.SMTPSecretID = smtpmail.SettingsFromEnv(r, s.From)
	}
	return s
}
