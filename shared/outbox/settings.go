package outbox

import (
	"context"

	"github.com/criticizer/criticizer/shared/config"
	"github.com/criticizer/criticizer/shared/delivery"
	"github.com/criticizer/criticizer/shared/secrets"
	"github.com/criticizer/criticizer/shared/settings"
)

// Settings name the delivery key the rows are keyed by (WithSecret).
type Settings struct {
	// DeliveryKeySecretID (DELIVERY_KEY_SECRET_ID, required) is the secret
	// holding the delivery key; docs/operating.md: never rotated.
	DeliveryKeySecretID string
}

// SettingsFromEnv reads DELIVERY_KEY_SECRET_ID; problems are collected in r.
func SettingsFromEnv(r *config.Reader) Settings {
	return Settings{DeliveryKeySecretID: r.StackRequired(settings.DeliveryKeySecretID)}
}

// Key reads the delivery key.
func (s Settings) Key(ctx context.Context, sm *secrets.Store) (*delivery.Secret, error) {
	v, _, err := sm.Version(ctx, s.DeliveryKeySecretID, secrets.Current)
	if err != nil {
		return nil, err
	}
	return delivery.NewSecret(v.Value)
}
