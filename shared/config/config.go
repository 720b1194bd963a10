// Package config owns the functions' runtime configuration: every setting is
// an environment variable set by the CDK stack, read once at cold start and
// validated, so that a bad deploy fails at start-up with a clear message
// instead of halfway through a job.
package config

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/criticizer/criticizer/shared/domain"
)

// Common is what every function needs.
type Common struct {
	Env         string
	LogLevel    string
	JobsTable   string
	QueueURLs   map[domain.Stage]string
	DLQURLs     map[domain.Stage]string
	RawBucket   string
	RedactedBkt string
	Lease       time.Duration
	// ClockSkew is the clock-skew budget between function hosts
	// (CLOCK_SKEW_SECONDS): lease comparisons allow for it.
	ClockSkew time.Duration
	// Retention is how long job, idempotency and outbox items live
	// (RETENTION_DAYS; the table's TTL attribute expires_at).
	Retention time.Duration
	// UniquenessRetention is how long the records that make a promise
	// unique live — idempotency records, changelist version gates, outbox
	// rows (delivery identities) — so that no duplicate job or e-mail
	// follows once the data expired (UNIQUENESS_RETENTION_DAYS, default
	// 365; 0 = forever, never expired).
	UniquenessRetention time.Duration
	MaxAttempts         int
}

// Reader collects missing or malformed variables so that one start-up error
// lists all of them.
type Reader struct {
	lookup func(string) (string, bool)
	errs   []error
	read   []string // every key looked up, in order, once
}

// NewReader reads from the process environment.
func NewReader() *Reader { return newReader(os.LookupEnv) }

// NewReaderFrom reads from a map (tests, tools, and infra's synth-time check
// of the environment it gives each function).
func NewReaderFrom(env map[string]string) *Reader {
	return newReader(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
}

func newReader(lookup func(string) (string, bool)) *Reader {
	r := &Reader{}
	r.lookup = func(k string) (string, bool) {
		if !slices.Contains(r.read, k) {
			r.read = append(r.read, k)
		}
		return lookup(k)
	}
	return r
}

// Keys lists every variable looked up so far: the settings a loader reads,
// which the stack must be able to set (infra's settings coverage test).
func (r *Reader) Keys() []string { return slices.Clone(r.read) }

// Fail records a problem a loader found beyond the reader's own checks
// (a value out of a set, two settings that contradict each other).
func (r *Reader) Fail(err error) {
	if err != nil {
		r.errs = append(r.errs, err)
	}
}

// OneOf returns a variable that must be one of allowed, or def when unset.
func (r *Reader) OneOf(key, def string, allowed ...string) string {
	v := r.Optional(key, def)
	if !slices.Contains(allowed, v) {
		r.errs = append(r.errs, fmt.Errorf("%s=%q must be one of %s", key, v, strings.Join(allowed, ", ")))
	}
	return v
}

// Float returns a number within [min, max], or def when unset.
func (r *Reader) Float(key string, def, min, max float64) float64 {
	v, ok := r.lookup(key)
	if !ok || strings.TrimSpace(v) == "" {
		return def
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || f < min || f > max {
		r.errs = append(r.errs, fmt.Errorf("%s=%q must be a number in [%g, %g]", key, v, min, max))
		return def
	}
	return f
}

// Bool returns "true" or "false" as a bool, or def when unset.
func (r *Reader) Bool(key string, def bool) bool {
	switch v := r.Optional(key, ""); v {
	case "":
		return def
	case "true":
		return true
	case "false":
		return false
	default:
		r.errs = append(r.errs, fmt.Errorf("%s=%q must be true or false", key, v))
		return def
	}
}

// String returns a required variable.
func (r *Reader) String(key string) string {
	v, ok := r.lookup(key)
	if !ok || strings.TrimSpace(v) == "" {
		r.errs = append(r.errs, fmt.Errorf("%s is required", key))
		return ""
	}
	return strings.TrimSpace(v)
}

// Optional returns a variable or def when unset.
func (r *Reader) Optional(key, def string) string {
	if v, ok := r.lookup(key); ok && strings.TrimSpace(v) != "" {
		return strings.TrimSpace(v)
	}
	return def
}

// Int returns an integer variable within [min, max], or def when unset.
func (r *Reader) Int(key string, def, min, max int) int {
	v, ok := r.lookup(key)
	if !ok || strings.TrimSpace(v) == "" {
		return def
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < min || n > max {
		r.errs = append(r.errs, fmt.Errorf("%s=%q must be an integer in [%d, %d]", key, v, min, max))
		return def
	}
	return n
}

// Seconds returns a duration given in whole seconds.
func (r *Reader) Seconds(key string, def, min, max int) time.Duration {
	return time.Duration(r.Int(key, def, min, max)) * time.Second
}

// List returns a comma-separated list with empty items removed.
func (r *Reader) List(key string) []string {
	var out []string
	for _, item := range strings.Split(r.Optional(key, ""), ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

// Err reports every problem found so far.
func (r *Reader) Err() error {
	if len(r.errs) == 0 {
		return nil
	}
	return fmt.Errorf("configuration: %w", errors.Join(r.errs...))
}

// DefaultUniquenessDays is UNIQUENESS_RETENTION_DAYS when unset: a year.
const DefaultUniquenessDays = 365

// LoadCommon reads the settings shared by every function.
func LoadCommon(r *Reader) Common {
	c := Common{
		Env:                 r.Optional("CRITICIZER_ENV", "dev"),
		LogLevel:            r.Optional("LOG_LEVEL", "info"),
		JobsTable:           r.String("JOBS_TABLE"),
		RawBucket:           r.Optional("RAW_BUCKET", ""),
		RedactedBkt:         r.Optional("REDACTED_BUCKET", ""),
		Lease:               r.Seconds("LEASE_SECONDS", 60, 5, 43200),
		MaxAttempts:         r.Int("MAX_ATTEMPTS", 5, 1, 20),
		ClockSkew:           r.Seconds("CLOCK_SKEW_SECONDS", 2, 0, 60),
		Retention:           time.Duration(r.Int("RETENTION_DAYS", 30, 1, 3650)) * 24 * time.Hour,
		UniquenessRetention: time.Duration(r.Int("UNIQUENESS_RETENTION_DAYS", DefaultUniquenessDays, 0, 36500)) * 24 * time.Hour,
		QueueURLs:           map[domain.Stage]string{},
		DLQURLs:             map[domain.Stage]string{},
	}
	for _, s := range domain.Stages {
		prefix := strings.ToUpper(string(s))
		c.QueueURLs[s] = r.Optional(prefix+"_QUEUE_URL", "")
		c.DLQURLs[s] = r.Optional(prefix+"_DLQ_URL", "")
	}
	return c
}

// AWS builds the SDK configuration from what the Lambda runtime gives every
// function: the region (AWS_REGION) and the execution role's temporary
// credentials (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN)
// in the environment, and AWS_ENDPOINT_URL (the SDK's own variable) where an
// emulator runs the function; path-style S3 addressing is then used because
// emulators are reached by IP address. It deliberately skips the SDK's
// default chain (shared config files, SSO, STS web identity, IMDS), which a
// function never uses: linking it costs every bootstrap about a megabyte.
// The operator CLI, which runs on people's machines, uses the default chain.
func AWS(context.Context) (aws.Config, error) {
	region := os.Getenv("AWS_REGION")
	if region == "" {
		region = os.Getenv("AWS_DEFAULT_REGION")
	}
	id, secret := os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY")
	var missing []string
	for name, v := range map[string]string{"AWS_REGION": region, "AWS_ACCESS_KEY_ID": id, "AWS_SECRET_ACCESS_KEY": secret} {
		if v == "" {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return aws.Config{}, fmt.Errorf("load AWS config: %s not set (the Lambda runtime sets them)", strings.Join(missing, ", "))
	}
	cfg := aws.Config{
		Region:      region,
		Credentials: aws.NewCredentialsCache(credentials.NewStaticCredentialsProvider(id, secret, os.Getenv("AWS_SESSION_TOKEN"))),
	}
	if ep := os.Getenv("AWS_ENDPOINT_URL"); ep != "" {
		cfg.BaseEndpoint = aws.String(ep)
	}
	return cfg, nil
}

// UsePathStyleS3 reports whether S3 clients must use path-style addressing.
func UsePathStyleS3() bool { return os.Getenv("AWS_ENDPOINT_URL") != "" }
