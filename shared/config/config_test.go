package config

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/criticizer/criticizer/shared/settings"
)

func TestLoadCommon(t *testing.T) {
	r := NewReaderFrom(map[string]string{
		"JOBS_TABLE": "jobs", "LEASE_SECONDS": "10", "FETCH_QUEUE_URL": "http://q/fetch", "LLM_DLQ_URL": "http://q/llm-dlq",
	})
	c := LoadCommon(r)
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	if c.JobsTable != "jobs" || c.Lease != 10*time.Second || c.MaxAttempts != 5 || c.QueueURLs["fetch"] != "http://q/fetch" || c.DLQURLs["llm"] != "http://q/llm-dlq" {
		t.Fatalf("unexpected config %+v", c)
	}
}

func TestReaderReportsEveryProblem(t *testing.T) {
	r := NewReaderFrom(map[string]string{"LEASE_SECONDS": "2", "MAX_ATTEMPTS": "x"})
	LoadCommon(r)
	err := r.Err()
	if err == nil {
		t.Fatal("want error")
	}
	for _, want := range []string{"JOBS_TABLE is required", "LEASE_SECONDS", "MAX_ATTEMPTS"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

func TestList(t *testing.T) {
	r := NewReaderFrom(map[string]string{"CONFIDENTIAL_DOMAINS": " corp.test , ,lan.test"})
	got := r.List(settings.ConfidentialDomains)
	if len(got) != 2 || got[0] != "corp.test" || got[1] != "lan.test" || r.Err() != nil {
		t.Fatalf("List = %q", got)
	}
}

func TestAWSFromTheLambdaEnvironment(t *testing.T) {
	tests := []struct {
		name     string
		env      map[string]string
		wantErr  string // substring; "" for success
		endpoint string
	}{
		{name: "role credentials", env: map[string]string{"AWS_REGION": "eu-west-1", "AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "x", "AWS_SESSION_TOKEN": "tok"}},
		{name: "emulator endpoint", env: map[string]string{"AWS_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test", "AWS_ENDPOINT_URL": "http://127.0.0.1:4566"}, endpoint: "http://127.0.0.1:4566"},
		{name: "default region", env: map[string]string{"AWS_DEFAULT_REGION": "us-west-2", "AWS_ACCESS_KEY_ID": "a", "AWS_SECRET_ACCESS_KEY": "b"}},
		{name: "no credentials", env: map[string]string{"AWS_REGION": "us-east-1"}, wantErr: "AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY not set"},
		{name: "no region", env: map[string]string{"AWS_ACCESS_KEY_ID": "a", "AWS_SECRET_ACCESS_KEY": "b"}, wantErr: "AWS_REGION not set"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, k := range []string{"AWS_REGION", "AWS_DEFAULT_REGION", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL"} {
				t.Setenv(k, tt.env[k])
			}
			cfg, err := AWS(context.Background())
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want one naming %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			wantRegion := tt.env["AWS_REGION"]
			if wantRegion == "" {
				wantRegion = tt.env["AWS_DEFAULT_REGION"]
			}
			if cfg.Region != wantRegion {
				t.Errorf("region %q, want %q", cfg.Region, wantRegion)
			}
			if got := aws.ToString(cfg.BaseEndpoint); got != tt.endpoint {
				t.Errorf("endpoint %q, want %q", got, tt.endpoint)
			}
			creds, err := cfg.Credentials.Retrieve(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if creds.AccessKeyID != tt.env["AWS_ACCESS_KEY_ID"] || creds.SecretAccessKey != tt.env["AWS_SECRET_ACCESS_KEY"] || creds.SessionToken != tt.env["AWS_SESSION_TOKEN"] {
				t.Errorf("credentials %+v do not come from the environment", creds)
			}
		})
	}
}

// The typed readers take the default and the range from the declaration
// (shared/settings) and refuse a value outside it, naming the variable and
// what it accepts.
func TestReaderTypedValues(t *testing.T) {
	tests := []struct {
		name    string
		env     string // the variable's value; "" = unset
		read    func(r *Reader) any
		want    any
		wantErr string
	}{
		{"float", "3.5", func(r *Reader) any { return r.Float(settings.LLMBytesPerToken) }, 3.5, ""},
		{"float default", "", func(r *Reader) any { return r.Float(settings.LLMBytesPerToken) }, 0.0, ""},
		{"float bad", "x", func(r *Reader) any { return r.Float(settings.LLMBytesPerToken) }, 0.0, `LLM_BYTES_PER_TOKEN="x" must be a number in 1–16`},
		{"float out of range", "17", func(r *Reader) any { return r.Float(settings.LLMBytesPerToken) }, 0.0, "in 1–16"},
		{"bool", "true", func(r *Reader) any { return r.Bool(settings.PromptPatchDrift) }, true, ""},
		{"bool default", "", func(r *Reader) any { return r.Bool(settings.RedactEmails) }, true, ""},
		{"bool bad", "yes", func(r *Reader) any { return r.Bool(settings.PromptPatchDrift) }, false, "PROMPT_PATCH_DRIFT=\"yes\" must be true or false"},
		{"one of", "ses", func(r *Reader) any { return r.OneOf(settings.EmailProvider) }, "ses", ""},
		{"one of default", "", func(r *Reader) any { return r.OneOf(settings.EmailProvider) }, "smtp", ""},
		{"one of bad", "pigeon", func(r *Reader) any { return r.OneOf(settings.EmailProvider) }, "smtp", "EMAIL_PROVIDER=\"pigeon\" must be one of smtp, ses"},
		{"int", "900", func(r *Reader) any { return r.Int(settings.LeaseSeconds) }, 900, ""},
		{"int default", "", func(r *Reader) any { return r.Int(settings.LeaseSeconds) }, 60, ""},
		{"int below", "4", func(r *Reader) any { return r.Int(settings.LeaseSeconds) }, 60, `LEASE_SECONDS="4" must be an integer in 5–900`},
		{"int above", "901", func(r *Reader) any { return r.Int(settings.LeaseSeconds) }, 60, "in 5–900"},
		{"int not a number", "1e3", func(r *Reader) any { return r.Int(settings.LeaseSeconds) }, 60, "must be an integer"},
		{"optional default", "", func(r *Reader) any { return r.Optional(settings.NotifyChannels) }, "email", ""},
		{"optional", "email,swarm-comments", func(r *Reader) any { return r.Optional(settings.NotifyChannels) }, "email,swarm-comments", ""},
		{"stack name", "raw", func(r *Reader) any { return r.Stack(settings.RawBucket) }, "raw", ""},
		{"stack name unset", "", func(r *Reader) any { return r.Stack(settings.RawBucket) }, "", ""},
		{"stack name required", "", func(r *Reader) any { return r.StackRequired(settings.RawBucket) }, "", "RAW_BUCKET is required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := map[string]string{}
			if tt.env != "" {
				for _, k := range []string{"LLM_BYTES_PER_TOKEN", "PROMPT_PATCH_DRIFT", "REDACT_EMAILS", "EMAIL_PROVIDER", "LEASE_SECONDS", "NOTIFY_CHANNELS", "RAW_BUCKET"} {
					env[k] = tt.env
				}
			}
			r := NewReaderFrom(env)
			got := tt.read(r)
			err := r.Err()
			if got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
			if (tt.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("err = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

// LoadCommon refuses each common setting outside its declared range at
// cold start, naming the variable and the range, and accepts the range's ends.
func TestLoadCommonRanges(t *testing.T) {
	tests := []struct {
		key, value, wantErr string // wantErr "" = accepted
	}{
		{"LEASE_SECONDS", "5", ""},
		{"LEASE_SECONDS", "900", ""},
		{"LEASE_SECONDS", "0", `LEASE_SECONDS="0" must be an integer in 5–900`},
		{"LEASE_SECONDS", "43200", `LEASE_SECONDS="43200" must be an integer in 5–900`},
		{"MAX_ATTEMPTS", "21", `MAX_ATTEMPTS="21" must be an integer in 1–20`},
		{"CLOCK_SKEW_SECONDS", "-1", `CLOCK_SKEW_SECONDS="-1" must be an integer in 0–60`},
		{"RETENTION_DAYS", "30", ""},
		{"RETENTION_DAYS", "31", `RETENTION_DAYS="31" must be an integer in 1–30`},
		{"UNIQUENESS_RETENTION_DAYS", "0", ""},
		{"LOG_LEVEL", "verbose", `LOG_LEVEL="verbose" must be one of debug, info, warn, error`},
	}
	for _, tt := range tests {
		t.Run(tt.key+"="+tt.value, func(t *testing.T) {
			r := NewReaderFrom(map[string]string{"JOBS_TABLE": "jobs", tt.key: tt.value})
			LoadCommon(r)
			err := r.Err()
			if (tt.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("err = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

// Keys lists every variable looked up, set or not, once: what infra checks
// the stack can set.
func TestReaderKeys(t *testing.T) {
	r := NewReaderFrom(map[string]string{"JOBS_TABLE": "jobs"})
	r.Optional(settings.SMTPHost)
	r.Int(settings.SMTPPort)
	r.Optional(settings.SMTPHost)
	r.Stack(settings.JobsTable)
	if got := r.Keys(); strings.Join(got, ",") != "SMTP_HOST,SMTP_PORT,JOBS_TABLE" {
		t.Errorf("Keys = %v, want [SMTP_HOST SMTP_PORT JOBS_TABLE]", got)
	}
}
