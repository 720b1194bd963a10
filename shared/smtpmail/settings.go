package smtpmail

import "github.com/criticizer/criticizer/shared/settings"
import "github.com/criticizer/criticizer/shared/config"

// SettingsFromEnv reads the SMTP channel's settings, for every function
// that sends over SMTP (the notify stage, the weekly digest): SMTP_HOST,
// SMTP_PORT, SMTP_TLS, SMTP_TIMEOUT_SECONDS (their defaults and ranges are
// declared in shared/settings), and SMTP_SECRET_ID, the secret
// ({"username","password"}) the credentials come from. from is the
// envelope sender (SMTP_FROM, read with the evidence settings).
func SettingsFromEnv(r *config.Reader, from string) (cfg Config, secretID string) {
	cfg = Config{
		Host: r.String(settings.SMTPHost),
		Port: r.Int(settings.SMTPPort),
		From: from,
		TLS:  TLSMode(r.OneOf(settings.SMTPTLS)),
		// A send takes up to MaxSendDuration(Timeout): below the function's timeout.
		Timeout: r.Seconds(settings.SMTPTimeoutSeconds),
	}
	return cfg, r.StackRequired(settings.SMTPSecretID)
}
