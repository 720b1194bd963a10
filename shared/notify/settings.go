package notify

import "github.com/criticizer/criticizer/shared/config"

// SMTPSettingsFromEnv reads the SMTP sender's settings, for every function
// that sends over SMTP (the notify stage, the weekly digest): SMTP_HOST,
// SMTP_PORT (default 587), SMTP_TLS (starttls, tls or none; default
// starttls), SMTP_TIMEOUT_SECONDS, and SMTP_SECRET_ID, the secret
// ({"username","password"}) the credentials come from. from is the
// envelope sender (SMTP_FROM, read with the evidence settings).
func SMTPSettingsFromEnv(r *config.Reader, from string) (cfg SMTPConfig, secretID string) {
	cfg = SMTPConfig{
		Host: r.String("SMTP_HOST"),
		Port: r.Int("SMTP_PORT", 587, 1, 65535),
		From: from,
		TLS:  TLSMode(r.OneOf("SMTP_TLS", string(TLSStartTLS), string(TLSStartTLS), string(TLSImplicit), string(TLSNone))),
		// A send takes up to MaxSendDuration(Timeout): below the function's timeout.
		Timeout: r.Seconds("SMTP_TIMEOUT_SECONDS", int(DefaultSMTPTimeout.Seconds()), 1, 300),
	}
	return cfg, r.String("SMTP_SECRET_ID")
}
