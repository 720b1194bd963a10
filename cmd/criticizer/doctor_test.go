package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"

	"github.com/criticizer/criticizer/shared/doctor"
)

// `criticizer`, `criticizer help` and -h list the commands and succeed
// with no AWS credentials at all and an endpoint nothing answers on: any
// AWS call would fail the command.
func TestHelpNeedsNoAWS(t *testing.T) {
	for _, k := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE", "CRITICIZER_STACK"} {
		t.Setenv(k, "")
	}
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	t.Setenv("AWS_CONFIG_FILE", "/nonexistent")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
	t.Setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:1")
	for _, args := range [][]string{nil, {"help"}, {"-h"}, {"--help"}, {"--stack", "Criticizer-prod", "help"}, {"--stack", "Criticizer-prod", "-h"}} {
		var out bytes.Buffer
		if err := run(context.Background(), args, &out); err != nil {
			t.Errorf("criticizer %v: %v", args, err)
		}
		for _, cmd := range []string{"doctor [--change CL]", "doctor --local", "dlq list", "dlq replay", "restart JOB_ID", "outbox JOB_ID", "secret rotate", "outcomes report", "promote --env"} {
			if !strings.Contains(out.String(), cmd) {
				t.Errorf("criticizer %v does not list %q:\n%s", args, cmd, out.String())
			}
		}
	}
	// A real command does reach for AWS, and says so: the check above can fail.
	if err := run(context.Background(), []string{"job", "x"}, &bytes.Buffer{}); err == nil {
		t.Error("criticizer job x succeeded with no AWS to answer")
	}
}

type fakeInvoker struct {
	in  *lambda.InvokeInput
	out *lambda.InvokeOutput
}

func (f *fakeInvoker) Invoke(_ context.Context, in *lambda.InvokeInput, _ ...func(*lambda.Options)) (*lambda.InvokeOutput, error) {
	f.in = in
	return f.out, nil
}

func TestDoctorReport(t *testing.T) {
	report := func(vs ...doctor.Verdict) []byte {
		b, _ := json.Marshal(doctor.Report{Verdicts: vs})
		return b
	}
	okV := doctor.Verdict{Check: "p4 connection and trust", Status: doctor.OK, Detail: "answers"}
	failV := doctor.Verdict{Check: "p4 protections on the allow-list", Status: doctor.Fail, Detail: "refused (exclusion_under_allowlist)", Fix: "give the service user read"}
	tests := []struct {
		name    string
		out     *lambda.InvokeOutput
		wantErr string
		want    []string
	}{
		{"all ok", &lambda.InvokeOutput{Payload: report(okV, doctor.Verdict{Check: "swarm", Status: doctor.Skip, Detail: "off"})}, "", []string{"ok    p4 connection and trust: answers", "1 ok, 0 warn, 0 fail, 1 skipped"}},
		{"a check fails", &lambda.InvokeOutput{Payload: report(okV, failV)}, "1 check(s) failed", []string{"fail  p4 protections", "fix: give the service user read"}},
		{"warnings pass", &lambda.InvokeOutput{Payload: report(doctor.Verdict{Check: "c", Status: doctor.Warn, Detail: "d", Fix: "f"})}, "", []string{"warn  c: d", "fix: f"}},
		{"cold start refused", &lambda.InvokeOutput{FunctionError: aws.String("Unhandled"), Payload: []byte(`{"errorMessage":"P4PORT is required"}`)}, "P4PORT is required", nil},
		{"no report", &lambda.InvokeOutput{Payload: []byte(`null`)}, "answered no report", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeInvoker{out: tt.out}
			var out bytes.Buffer
			r, err := invokeDoctor(context.Background(), f, "doctor-fn", doctor.Request{Change: 12345})
			if err == nil {
				err = printReport(&out, r, false, "Criticizer-test")
			}
			if (tt.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
			if !strings.Contains(string(f.in.Payload), `"change":12345`) || aws.ToString(f.in.FunctionName) != "doctor-fn" {
				t.Errorf("invoked %s with %s", aws.ToString(f.in.FunctionName), f.in.Payload)
			}
			for _, w := range tt.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, out.String())
				}
			}
		})
	}
}

func TestDoctorLocalRefusesAWS(t *testing.T) {
	for endpoint, ok := range map[string]bool{"": false, "https://lambda.us-east-1.amazonaws.com": false, "http://127.0.0.1:4566": true, "http://localhost:4566": true} {
		t.Setenv("AWS_ENDPOINT_URL", endpoint)
		if _, err := localAWS(); (err == nil) != ok {
			t.Errorf("AWS_ENDPOINT_URL=%q: err %v", endpoint, err)
		}
	}
}
