package redact

import (
	"strings"
	"testing"
)

// TestBareSecrets: secrets without the context that usually gives them away
// are caught under Policy.BareSecrets, and ordinary diagnostic text is not
// touched.
func TestBareSecrets(t *testing.T) {
	r := newRedactor(t, Policy{BareSecrets: true})
	secrets := []string{
		"wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY",                           // AWS secret access key
		"MIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM9Oi8+e2b2c1CqzrqYmMRN0BOQdZVuTt", // one PEM body line
		"Zq8WmN3xR7vT2kLp9sYbH4cD",                                            // random token
		"q7Lx_9Zm4-Rt8Wv1Nb6Kc3Yd0Pf5Gs2h",                                    // base64url token
	}
	for _, s := range secrets {
		for _, in := range []string{s, "error: " + s, "550 5.7.1 rejected line: " + s + " (policy)"} {
			got, _, err := r.Redact(in)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(got, s) {
				t.Errorf("bare secret survived: %q", got)
			}
		}
	}
	ordinary := []string{
		"p4 describe: exit status 1: Change 12345 unknown.",
		"NOT_FOUND: delivery to this recipient failed permanently: NOT_FOUND",
		"ConditionalCheckFailedException: The conditional request failed",
		"job 3f2b8c1e-9a4d-4e6f-8b1a-2c3d4e5f6a7b stage llm attempt 3",
		"commit 9fceb02d0ae598e95dc970b74767f19372d61af8 and sha256 3f2a9c0d7e1b4a5f6c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b",
		"open //depot/main/src/App2Config.java: no such file",
		"github.com/criticizer/criticizer/shared/stage.(*Runtime).handleRecord(0xc000123456)",
		"/root/go/pkg/mod/github.com/aws/aws-sdk-go-v2/service/dynamodb@v1.73.1/api_op_UpdateItem.go:213",
		"arn:aws:sqs:us-east-1:000000000000:criticizer-dev-fetch-dlq",
		"RequestID: 5ZKQ2V4GJ8R1TN0B, HostID: abc",
		"TestRefusedSendIsRetriedOnce failed after 3 attempts",
		"UPSTREAM_5XX: llm: provider answered 500 (code \"internal_error\", type \"server_error\", request req_8f2a9c)",
		"dial tcp 127.0.0.1:45123: connect: connection refused",
		"operation error DynamoDB: UpdateItem, https response error StatusCode: 400, RequestID: KQ2V4GJ8R1TN0B5ZKQ2V4GJ8R1TN0B5ZKQ2V4GJ8R1TN, api error ValidationException",
		"src/main/java/com/example/Billing2Service.java:42",
		"<cl12345.v2.3f2a9c0d7e1b4a5f6c8d9e0f1a2b3c4d@criticizer.example.com>",
	}
	for _, s := range ordinary {
		got, _, err := r.Redact(s)
		if err != nil {
			t.Fatal(err)
		}
		if got != s {
			t.Errorf("ordinary text changed:\n in: %s\nout: %s", s, got)
		}
	}
}

// Bare-secret detection is for diagnostics: a diff keeps its hashes and
// test data without it.
func TestBareSecretsOffByDefault(t *testing.T) {
	r := newRedactor(t, plainPolicy)
	in := "+\texpected := \"Zq8WmN3xR7vT2kLp9sYbH4cD\"\n"
	if got, _, _ := r.Redact(in); got != in {
		t.Errorf("changed without BareSecrets: %q", got)
	}
}

// A long line (minified code) is scanned in windows around keywords: secrets
// anywhere on it are still found.
func TestLongLine(t *testing.T) {
	r := newRedactor(t, plainPolicy)
	var b strings.Builder
	secrets := []string{"AKIAQX7N3PLV2KD5RTWE", "Zq8WmN3xR7vT2kLp9sYbH4cD", "hunter2-Sommer"}
	for i := 0; i < 600; i++ {
		switch i {
		case 0:
			b.WriteString(`var k="` + secrets[0] + `";`)
		case 300:
			b.WriteString(`cfg.api_key="` + secrets[1] + `";`)
		case 599:
			b.WriteString(`password="` + secrets[2] + `"`)
		default:
			b.WriteString(`if(a.b(c)){return d.e(f,g)};`)
		}
	}
	in := b.String()
	if len(in) < 4*longLine {
		t.Fatalf("line of %d bytes is not long", len(in))
	}
	got, _, err := r.Redact(in)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range secrets {
		if strings.Contains(got, s) {
			t.Errorf("%s survived on a long line", s)
		}
	}
}
