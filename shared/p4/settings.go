package p4

import (
	"github.com/criticizer/criticizer/shared/config"
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
		Config: Config{Path: r.String("P4_BIN"), Port: r.String("P4PORT"), User: r.String("P4USER"),
			Timeout: r.Seconds("P4_TIMEOUT_SECONDS"),
			Charset: r.Optional("P4CHARSET"), TrustFingerprint: r.Optional("P4TRUST_FINGERPRINT"),
			Tickets: Home + "/tickets", Trust: Home + "/trust", Home: Home},
		SecretID: r.Stack("P4_SECRET_ID"),
		Options: Options{Parallelism: r.Int("P4_PARALLELISM"), MaxFileBytes: int64(r.Int("P4_MAX_FILE_BYTES")),
			ServerRole: r.OneOf("P4_SERVER_ROLE")},
	}
}
