package smtpmail

import (
	"context"
	"fmt"

	"github.com/criticizer/criticizer/shared/secrets"
)

// Probe connects to the relay as a send does (the TLS policy, the login
// from the secret secretID) and quits without sending anything: the
// pre-flight's e-mail check (shared/doctor). Its error carries no reply
// text beyond go-mail's.
func Probe(ctx context.Context, sm *secrets.Store, secretID string, cfg Config) error {
	value, _, err := sm.Get(ctx, secretID, secrets.Current)
	if err != nil {
		return err
	}
	var creds struct{ Username, Password string }
	if err := secrets.Unmarshal(secretID, value, &creds, "password"); err != nil {
		return err
	}
	cfg.Username, cfg.Password = creds.Username, creds.Password
	s, err := New(cfg, nil)
	if err != nil {
		return err
	}
	c, err := s.client(ctx)
	if err != nil {
		return err
	}
	if err := c.DialWithContext(ctx); err != nil {
		return fmt.Errorf("smtpmail: connect and log in to %s:%d: %w", cfg.Host, s.cfg.Port, err)
	}
	return c.Close()
}
