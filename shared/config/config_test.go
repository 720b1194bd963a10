package config

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
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
	r := NewReaderFrom(map[string]string{"L": " //a/... , ,//b/..."})
	got := r.List("L")
	if len(got) != 2 || got[0] != "//a/..." || got[1] != "//b/..." {
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

func TestReaderTypedValues(t *testing.T) {
	env := map[string]string{"F": "3.5", "FBAD": "x", "B": "true", "BBAD": "yes", "O": "ses", "OBAD": "pigeon"}
	tests := []struct {
		name    string
		read    func(r *Reader) any
		want    any
		wantErr string
	}{
		{"float", func(r *Reader) any { return r.Float("F", 1, 1, 16) }, 3.5, ""},
		{"float default", func(r *Reader) any { return r.Float("UNSET", 0, 1, 16) }, 0.0, ""},
		{"float bad", func(r *Reader) any { return r.Float("FBAD", 2, 1, 16) }, 2.0, "FBAD"},
		{"float out of range", func(r *Reader) any { return r.Float("F", 2, 4, 16) }, 2.0, "[4, 16]"},
		{"bool", func(r *Reader) any { return r.Bool("B", false) }, true, ""},
		{"bool default", func(r *Reader) any { return r.Bool("UNSET", true) }, true, ""},
		{"bool bad", func(r *Reader) any { return r.Bool("BBAD", false) }, false, "true or false"},
		{"one of", func(r *Reader) any { return r.OneOf("O", "smtp", "smtp", "ses") }, "ses", ""},
		{"one of default", func(r *Reader) any { return r.OneOf("UNSET", "smtp", "smtp", "ses") }, "smtp", ""},
		{"one of bad", func(r *Reader) any { return r.OneOf("OBAD", "smtp", "smtp", "ses") }, "pigeon", "one of smtp, ses"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
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

// Keys lists every variable looked up, set or not, once: what infra checks
// the stack can set.
func TestReaderKeys(t *testing.T) {
	r := NewReaderFrom(map[string]string{"JOBS_TABLE": "jobs"})
	r.Optional("A", "")
	r.Int("B", 1, 0, 2)
	r.Optional("A", "")
	if got := r.Keys(); strings.Join(got, ",") != "A,B" {
		t.Errorf("Keys = %v, want [A B]", got)
	}
}
