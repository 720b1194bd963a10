package redact

import (
	"strings"
	"testing"
)

// leakCase is a previously reported leakage: text that once reached (or
// would have reached) the LLM with secret material in it. A case is never
// deleted; a new report gets the next id. Each lists the secret fragments
// that must not appear in the output.
type leakCase struct {
	id     string
	report string
	in     string
	secret []string
	policy Policy
}

var leakCases = []leakCase{
	{
		id:     "LEAK-001",
		report: "JDBC connection string: password ended at the first ';' but the '#' inside it let the rest through",
		in:     `url = "jdbc:sqlserver://db01:1433;user=sa;password=Xy7#kL9!q;encrypt=true"`,
		secret: []string{"Xy7", "kL9!q"},
	},
	{
		id:     "LEAK-002",
		report: "private key pasted into a changelist description without its END line",
		in:     "Rotated the deploy key, old one for reference:\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\nQyNTUxOQAAACBm3u1zDp6Yq6xVNv0w2U0o8n9dS4Lk1s6b7X8hF0pL2QAAAJgN5r4SDea+\n\nThanks, Bob\n",
		secret: []string{"b3BlbnNzaC1rZXktdjEAAAAABG5vbmU", "QyNTUxOQAAACBm3u1zDp6Yq6xVNv0w2U0o8n9dS4Lk1s6b7X8hF0pL2QAAAJgN5r4SDea"},
	},
	{
		id:     "LEAK-003",
		report: "curl example in a code comment carried a live API token in its Authorization header",
		in:     `// curl -s -H "Authorization: Bearer sk-proj-7Hq2Lx9Zm4Rt8Wv1Nb6Kc3Yd0Pf5Gs" https://api.example.org/v1/models`,
		secret: []string{"sk-proj-7Hq2Lx9Zm4Rt8Wv1Nb6Kc3Yd0Pf5Gs", "7Hq2Lx9Zm4Rt8Wv1Nb6Kc3Yd0Pf5Gs"},
	},
	{
		id:     "LEAK-004",
		report: "SMTP relay URI whose password contained an unescaped '@': only the part after it was treated as host",
		in:     `relay: smtp://alerts:p@ss-w0rd!@smtp.example.org:465`,
		secret: []string{"p@ss-w0rd!", "ss-w0rd!"},
	},
	{
		id:     "LEAK-005",
		report: "a redacted password also appeared verbatim in a debug print a few lines below",
		in:     "dbPassword := \"Zq8-wM3x-R7vT\"\n// ...\nlog.Printf(\"dsn=app:Zq8-wM3x-R7vT@tcp(db)/app\")\n",
		secret: []string{"Zq8-wM3x-R7vT"},
	},
	{
		id:     "LEAK-006",
		report: "a developer silenced gitleaks with an inline allow comment; the key went out",
		in:     `awsKey := "AKIAQX7N3PLV2KD5RTWE" // gitleaks:allow`,
		secret: []string{"AKIAQX7N3PLV2KD5RTWE"},
	},
	{
		id:     "LEAK-007",
		report: "Kubernetes Secret manifest with base64-encoded values",
		in:     "kind: Secret\ndata:\n  password: SHVudGVyMi1wcm9kLTIwMjQ=\n  api_key: ZjNiOWMyZDhlN2E2YjVjNGQzZTJmMWEwYjljOGQ3ZTY=\n",
		secret: []string{"SHVudGVyMi1wcm9kLTIwMjQ=", "ZjNiOWMyZDhlN2E2YjVjNGQzZTJmMWEwYjljOGQ3ZTY="},
	},
	{
		id:     "LEAK-008",
		report: "password in a .env file containing '&' was cut at the '&'",
		in:     "SMTP_USER=alerts\nSMTP_PASSWORD=Tr0ub4dor&3xq\n",
		secret: []string{"Tr0ub4dor", "3xq"},
	},
	{
		id:     "LEAK-009",
		report: "Windows-edited config (CRLF) with a password and a private key",
		in:     "[db]\r\npassword = Wint3r-Is-Coming\r\nkey = -----BEGIN RSA PRIVATE KEY-----\r\nMIIEowIBAAKCAQEAx9Zq2Lm4Rt8Wv1Nb6Kc3Yd0Pf5Gs7Hq2Lx9Zm4Rt8Wv1Nb6Kc3\r\n",
		secret: []string{"Wint3r-Is-Coming", "MIIEowIBAAKCAQEAx9Zq2Lm4Rt8Wv1Nb6Kc3Yd0Pf5Gs7Hq2Lx9Zm4Rt8Wv1Nb6Kc3"},
	},
	{
		id:     "LEAK-010",
		report: "diff hunk ended in the middle of a quoted password",
		in:     "@@ -10,3 +10,4 @@\n config.Load()\n+cfg.SMTPPassword = \"relay-9f2Kq9x",
		secret: []string{"relay-9f2Kq9x"},
	},
	{
		id:     "LEAK-011",
		report: "internal build host and address in a changelist description despite the confidentiality policy",
		in:     "Deployed to build07.corp.example.com (10.42.7.19) after the outage.",
		secret: []string{"build07", "corp.example.com", "10.42.7.19"},
		policy: Policy{ConfidentialDomains: []string{"corp.example.com"}, ConfidentialCIDRs: []string{"10.0.0.0/8"}},
	},
}

func TestPreviouslyReportedLeaks(t *testing.T) {
	for _, tc := range leakCases {
		t.Run(tc.id, func(t *testing.T) {
			r := newRedactor(t, tc.policy)
			out, ms, err := r.Redact(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range tc.secret {
				if strings.Contains(out, s) {
					t.Errorf("%s (%s): %q survived:\n%s", tc.id, tc.report, s, out)
				}
			}
			if len(ms) == 0 {
				t.Errorf("%s: no matches reported", tc.id)
			}
			if strings.Count(out, "\n") != strings.Count(tc.in, "\n") {
				t.Errorf("%s: line count changed", tc.id)
			}
		})
	}
}
