package smtpmail

import (
	"context"
	"log/slog"

	"github.com/criticizer/criticizer/shared/delivery"
	"github.com/criticizer/criticizer/shared/notify"
	"github.com/criticizer/criticizer/shared/secrets"
)

// FromSecret returns the SMTP channel for cfg with its login read from the
// Secrets Manager secret secretID ({"username","password"}), settling
// uncertain sends with evidence (nil: none). The Sender is rebuilt whenever
// the secret changes, so an emergency rotation reaches warm functions: a
// rejected login re-reads the secret. The secret is read now, so a bad one
// fails the cold start, not the first send. Any function that e-mails (the
// notify stage, a digest) builds its channel here.
func FromSecret(ctx context.Context, sm *secrets.Store, secretID string, cfg Config, evidence Evidence, log *slog.Logger) (*Channel, error) {
	smtp := secrets.NewRotating(sm, secretID, func(v string) (*Sender, error) {
		var creds struct{ Username, Password string }
		if err := secrets.Unmarshal(secretID, v, &creds, "password"); err != nil {
			return nil, err
		}
		c := cfg
		c.Username, c.Password = creds.Username, creds.Password
		return New(c, log)
	})
	if _, _, err := smtp.Get(ctx, false); err != nil {
		return nil, err
	}
	send := func(ctx context.Context, k delivery.Key, m *notify.Message) (string, error) {
		return secrets.Do(ctx, smtp, func(s *Sender) (string, error) { return s.Send(ctx, k, m) })
	}
	return NewChannel(send, evidence), nil
}
