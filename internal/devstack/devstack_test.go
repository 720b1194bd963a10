package devstack

import (
	"strings"
	"testing"
)

func TestOutputsLocalAPIURL(t *testing.T) {
	o := Outputs{"ApiId": "abc123", "ApiStage": "local"}
	if got := o.LocalAPIURL("http://127.0.0.1:4566/"); got != "http://127.0.0.1:4566/_aws/execute-api/abc123/local" {
		t.Errorf("LocalAPIURL = %s", got)
	}
}

func TestEmulatorEnvDropsAWSSettings(t *testing.T) {
	got := emulatorEnv([]string{"PATH=/bin", "AWS_PROFILE=prod", "AWS_SECRET_ACCESS_KEY=x", "HOME=/root", "TMPDIR=/x"})
	if strings.Join(got, " ") != "PATH=/bin HOME=/root" {
		t.Errorf("env = %v", got)
	}
}
