package p4

import (
	"github.com/criticizer/criticizer/shared/config"
	"github.com/criticizer/criticizer/shared/settings"
)

// Home is where the fetch function keeps p4's tickets and trust files: /tmp
// is the only writable place in Lambda.
const Home = "/tmp/criticizer-p4"

// Settings are the fetch function's p4 settings.
type Settings struct {
	Config   Config
	SecretID string // P4_SECRET_ID: the service user's credential; "" for none (a ticket-less server)
	Options  Options
}

// SettingsFromEnv reads the p4 settings (shared/settings' fetch table). No
// client workspace is set: the fetch stage reads depot paths only (p4
// describe, print), which need none.
func SettingsFromEnv(r *config.Reader) Settings {
	return Settings{
		Config: Config{Path: r.String(settings.P4Bin), Port: r.String(settings.P4Port), User: r.String(settings.P4User),
			Timeout: r.Seconds(settings.P4TimeoutSeconds),
			Charset: r.Optional(settings.P4Charset), TrustFingerprint: r.Optional(settings.P4TrustFingerprint),
			Tickets: Home + "/tickets", Trust: Home + "/trust", Home: Home},
		SecretID: r.Stack(settings.P4SecretID),
		Options: Options{Parallelism: r.Int(settings.P4Parallelism), MaxFileBytes: int64(r.Int(settings.P4MaxFileBytes)),
			ServerRole: r.OneOf(settings.P4ServerRole)},
	}
}
