// Package config owns the functions' runtime configuration: every setting is
// an environment variable set by the CDK stack, read once at cold start and
// validated against its declaration (shared/settings: its default and
// range), so that a bad deploy fails at start-up with a clear message naming
// the variable and what it accepts, instead of halfway through a job.
package config

import (
	"cmp"
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
	"github.com/criticizer/criticizer/shared/settings"
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

// value is v's value checked against its declaration, or the declared
// default when it is unset or refused (the refusal is recorded).
func (r *Reader) value(v settings.Var) string {
	s, set := r.lookup(v.Name)
	if s = strings.TrimSpace(s); !set || s == "" {
		return v.Accepts.Default
	}
	if err := v.Accepts.Check(s); err != nil {
		r.errs = append(r.errs, fmt.Errorf("%s=%q %w", v.Name, s, err))
		return v.Accepts.Default
	}
	return s
}

// OneOf returns a variable that must be one of its declared choices, or
// its declared default when unset.
func (r *Reader) OneOf(v settings.ChoiceVar) string { return r.value(v.Var) }

// Float returns a number within its declared range, or its declared
// default when unset.
func (r *Reader) Float(v settings.NumberVar) float64 {
	f, _ := strconv.ParseFloat(r.value(v.Var), 64)
	return f
}

// Bool returns a declared true/false variable, or its declared default
// when unset.
func (r *Reader) Bool(v settings.FlagVar) bool { return r.value(v.Var) == "true" }

// String returns a declared text variable that must not be empty (its
// declared default, when it has one, counts).
func (r *Reader) String(v settings.TextVar) string { return r.required(v.Var, r.value(v.Var)) }

// Optional returns a declared text variable, or its declared default when
// unset.
func (r *Reader) Optional(v settings.TextVar) string { return r.value(v.Var) }

// Stack returns a name the stack sets itself (a table, queue URL, bucket or
// secret ID: a *stack* row's Names in shared/settings), "" when unset. It is
// not a setting, so it has no default or range.
func (r *Reader) Stack(v settings.NameVar) string {
	s, _ := r.lookup(v.Name)
	return strings.TrimSpace(s)
}

// StackRequired is Stack for a name the function cannot run without.
func (r *Reader) StackRequired(v settings.NameVar) string { return r.required(v.Var, r.Stack(v)) }

// required records v as required when s is empty.
func (r *Reader) required(v settings.Var, s string) string {
	if s == "" {
		r.errs = append(r.errs, fmt.Errorf("%s is required", v.Name))
	}
	return s
}

// Int returns an integer within its declared range, or its declared
// default when unset.
func (r *Reader) Int(v settings.IntVar) int {
	n, _ := strconv.Atoi(r.value(v.Var))
	return n
}

// Seconds returns a declared integer variable as a duration in seconds.
func (r *Reader) Seconds(v settings.IntVar) time.Duration {
	return time.Duration(r.Int(v)) * time.Second
}

// Days returns a declared integer variable as a duration in days.
func (r *Reader) Days(v settings.IntVar) time.Duration {
	return time.Duration(r.Int(v)) * 24 * time.Hour
}

// List returns a comma-separated list with empty items removed.
func (r *Reader) List(v settings.TextVar) []string {
	var out []string
	for _, item := range strings.Split(r.Optional(v), ",") {
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

// LoadCommon reads the settings shared by every function.
func LoadCommon(r *Reader) Common {
	return Common{
		// The stack always sets CRITICIZER_ENV; a function run by hand is dev.
		Env:                 cmp.Or(r.Stack(settings.CriticizerEnv), "dev"),
		LogLevel:            r.OneOf(settings.LogLevel),
		JobsTable:           r.StackRequired(settings.JobsTable),
		RawBucket:           r.Stack(settings.RawBucket),
		RedactedBkt:         r.Stack(settings.RedactedBucket),
		Lease:               r.Seconds(settings.LeaseSeconds),
		MaxAttempts:         r.Int(settings.MaxAttempts),
		ClockSkew:           r.Seconds(settings.ClockSkewSeconds),
		Retention:           r.Days(settings.RetentionDays),
		UniquenessRetention: r.Days(settings.UniquenessRetentionDays),
		QueueURLs: map[domain.Stage]string{domain.StageFetch: r.Stack(settings.FetchQueueURL),
			domain.StageLLM: r.Stack(settings.LLMQueueURL), domain.StageNotify: r.Stack(settings.NotifyQueueURL)},
		DLQURLs: map[domain.Stage]string{domain.StageFetch: r.Stack(settings.FetchDLQURL),
			domain.StageLLM: r.Stack(settings.LLMDLQURL), domain.StageNotify: r.Stack(settings.NotifyDLQURL)},
	}
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
	region := cmp.Or(os.Getenv("AWS_REGION"), os.Getenv("AWS_DEFAULT_REGION"))
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
