package redact

import (
	"strings"
	"sync"
	"testing"

	"github.com/criticizer/criticizer/shared/failure"
)

// The samples below are fake: well-formed for the detectors, valid nowhere.

var (
	plainPolicy = Policy{}
	fullPolicy  = Policy{
		RedactEmails:        true,
		ConfidentialDomains: []string{"corp.example.com", ".prod.internal."},
		ConfidentialCIDRs:   []string{"10.0.0.0/8", "fd00::/8"},
	}
)

func newRedactor(t testing.TB, p Policy) *Redactor {
	t.Helper()
	r, err := New(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

type redactCase struct {
	name   string
	in     string
	want   string
	rules  []string // rule ids expected in the matches; nil: do not check
	policy *Policy  // nil: fullPolicy
}

func runCases(t *testing.T, cases []redactCase) {
	t.Helper()
	plain, full := newRedactor(t, plainPolicy), newRedactor(t, fullPolicy)
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			r := full
			if tt.policy != nil {
				r = plain
				if tt.policy != &plainPolicy {
					r = newRedactor(t, *tt.policy)
				}
			}
			got, ms, err := r.Redact(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("Redact(%q)\n got: %q\nwant: %q", tt.in, got, tt.want)
			}
			if strings.Count(got, "\n") != strings.Count(tt.in, "\n") {
				t.Errorf("line count changed: %d -> %d", strings.Count(tt.in, "\n"), strings.Count(got, "\n"))
			}
			if tt.rules != nil {
				seen := map[string]bool{}
				for _, m := range ms {
					seen[m.Rule] = true
				}
				for _, rule := range tt.rules {
					if !seen[rule] {
						t.Errorf("no %s match in %v", rule, ms)
					}
				}
			}
			if tt.want == tt.in && len(ms) != 0 {
				t.Errorf("unchanged text reported matches %v", ms)
			}
		})
	}
}

// TestPositive has representative samples of every class the spec lists.
func TestPositive(t *testing.T) {
	runCases(t, []redactCase{
		// API keys and bearer tokens: known prefixes (gitleaks rules).
		{"aws access key id", `awsAccessKeyID = "AKIAQX7N3PLV2KD5RTWE"`, `awsAccessKeyID = "[REDACTED:aws-access-token]"`, []string{"aws-access-token"}, nil},
		{"github pat", `token := "ghp_R7eP6ZkVvFqjqYzJ4p2Yc0mW1aXbN8sT3uHd"`, `token := "[REDACTED:github-pat]"`, nil, nil},
		{"slack bot token", `SLACK_TOKEN=xoxb-2817364510-5928173640182-Zq8WmN3xR7vT2kLp9sYbH4cD`, `SLACK_TOKEN=[REDACTED:slack-bot-token]`, nil, nil},
		{"stripe key", `stripe.Key = "sk_live_51NxYzQ7bCdE8fGhIjK2lMnOpQrStUvWxYz"`, `stripe.Key = "[REDACTED:stripe-access-token]"`, nil, nil},
		{"gcp api key", "GOOGLE_API_KEY=AIzaSyD3m0F4k3K3yAbCdEfGhIjKlMnOpQrStUv", "GOOGLE_API_KEY=[REDACTED:gcp-api-key]", nil, nil},
		{"jwt", "token: eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c", "token: [REDACTED:jwt]", nil, nil},
		// Generic high-entropy tokens.
		{"generic api key", `api_key = "f3b9c2d8e7a6b5c4d3e2f1a0b9c8d7e6"`, `api_key = "[REDACTED:generic-api-key]"`, []string{"generic-api-key"}, nil},
		{"bearer header", "Authorization: Bearer 8f2Kq9xLm4Zt7Rw1Vb6Nc3Hd", "Authorization: Bearer [REDACTED:bearer-token]", []string{"bearer-token"}, nil},
		{"bearer header json", `{"Authorization": "Bearer 8f2Kq9xLm4Zt7Rw1Vb6Nc3Hd"}`, `{"Authorization": "Bearer [REDACTED:bearer-token]"}`, nil, nil},
		{"bearer in code", `req.Header.Set("Authorization", "Bearer 8f2Kq9xLm4Zt7Rw1Vb6Nc3Hd")`, `req.Header.Set("Authorization", "Bearer [REDACTED:bearer-token]")`, nil, nil},
		{"basic auth header", "Authorization: Basic YWxhZGRpbjpvcGVuc2VzYW1l", "Authorization: Basic [REDACTED:bearer-token]", nil, nil},
		{"authorization without scheme", "proxy-authorization=Zk93hT2lPq88sd", "proxy-authorization=[REDACTED:bearer-token]", nil, nil},

		// Password assignments in code and config.
		{"go const", `dbPassword = "Tr0ub4dor&3-staging"`, `dbPassword = "[REDACTED:password-assignment]"`, []string{"password-assignment"}, nil},
		{"go short decl", `pass := "hunter2"`, `pass := "[REDACTED:password-assignment]"`, nil, nil},
		{"go struct field", `Password: "hunter2",`, `Password: "[REDACTED:password-assignment]",`, nil, nil},
		{"go comparison", `if pw := r.Form.Get("p"); pwd == "letmein" {`, `if pw := r.Form.Get("p"); pwd == "[REDACTED:password-assignment]" {`, nil, nil},
		{"python kwarg", `conn = connect(user="app", password='s3cret!')`, `conn = connect(user="app", password='[REDACTED:password-assignment]')`, nil, nil},
		{"python annotated", `password: str = "hunter2"`, `password: str = "[REDACTED:password-assignment]"`, nil, nil},
		{"js object", "const cfg = { dbPass: `hunter2` };", "const cfg = { dbPass: `[REDACTED:password-assignment]` };", nil, nil},
		{"php array", `'password' => 'hunter2',`, `'password' => '[REDACTED:password-assignment]',`, nil, nil},
		{"json", `{"user": "app", "password": "hunter2"}`, `{"user": "app", "password": "[REDACTED:password-assignment]"}`, nil, nil},
		{"yaml", "db:\n  password: hunter2\n", "db:\n  password: [REDACTED:password-assignment]\n", nil, nil},
		{"dotenv", "DB_PASSWORD=hunter2\nSMTP_PASS=relay-pw-1\n", "DB_PASSWORD=[REDACTED:password-assignment]\nSMTP_PASS=[REDACTED:password-assignment]\n", nil, nil},
		{"ini with comment", "password = hunter2 ; rotated monthly", "password = [REDACTED:password-assignment] ; rotated monthly", nil, nil},
		{"properties dotted", "spring.datasource.password=hunter2", "spring.datasource.password=[REDACTED:password-assignment]", nil, nil},
		{"shell export", "export PGPASSWORD='hunter2'", "export PGPASSWORD='[REDACTED:password-assignment]'", nil, nil},
		{"command line flag", "mysqldump --password=hunter2 prod", "mysqldump --password=[REDACTED:password-assignment] prod", nil, nil},
		{"url query", "GET /login?user=bob&password=hunter2&next=/", "GET /login?user=bob&password=[REDACTED:password-assignment]&next=/", nil, nil},
		{"client secret", `client_secret = "abc123"`, `client_secret = "[REDACTED:password-assignment]"`, nil, nil},
		{"passphrase with spaces", `passphrase = "correct horse battery staple"`, `passphrase = "[REDACTED:password-assignment]"`, nil, nil},
		{"xml", "<password>hunter2</password>", "<password>[REDACTED:password-assignment]</password>", nil, nil},
		{"sql", "CREATE USER app IDENTIFIED BY 'hunter2';", "CREATE USER app IDENTIFIED BY '[REDACTED:password-assignment]';", nil, nil},
		{"sql with password", "ALTER ROLE app WITH PASSWORD 'hunter2';", "ALTER ROLE app WITH PASSWORD '[REDACTED:password-assignment]';", nil, nil},

		// Private keys.
		{"pem one block", "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIBkg4LVWM9nuwNSk3yByxZpYRTBnVJk5oo8nsTx8zU1eoAoGCCqGSM49\nAwEHoUQDQgAE\n-----END EC PRIVATE KEY-----\n",
			"[REDACTED:pem-private-key]\n[REDACTED:pem-private-key]\n[REDACTED:pem-private-key]\n[REDACTED:pem-private-key]\n", []string{"pem-private-key"}, nil},

		// SMTP credentials and URIs with embedded auth.
		{"smtp uri", `smtp://deploy-bot:s3cr3t-Relay-42@mail.example.org:587`, `smtp://[REDACTED:uri-credentials]@mail.example.org:587`, []string{"uri-credentials"}, &plainPolicy},
		{"postgres uri", `DATABASE_URL=postgres://app:pw-42@db.example.org/app`, `DATABASE_URL=postgres://[REDACTED:uri-credentials]@db.example.org/app`, nil, &plainPolicy},
		{"uri in string", `dsn := "mongodb+srv://admin:Zx9pq@cluster0.example.net/?retryWrites=true"`, `dsn := "mongodb+srv://[REDACTED:uri-credentials]@cluster0.example.net/?retryWrites=true"`, nil, &plainPolicy},
		{"smtp transcript", "C: AUTH PLAIN AGJvdABodW50ZXIy\nS: 235 2.7.0 Authentication successful\n", "C: AUTH PLAIN [REDACTED:smtp-auth]\nS: 235 2.7.0 Authentication successful\n", []string{"smtp-auth"}, nil},
		{"smtp settings", "smtp.auth.password = relayPw99", "smtp.auth.password = [REDACTED:password-assignment]", nil, nil},

		// E-mail addresses, when the policy says so.
		{"email", "Reported-by: Alice Example <alice@example.com>", "Reported-by: Alice Example <[REDACTED:email]>", []string{"email"}, nil},
		{"email mailto", "mailto:bob.smith+ci@example.co.uk", "mailto:[REDACTED:email]", nil, nil},

		// Internal hosts and IPs, when the policy marks them confidential.
		{"internal host", "curl https://build01.corp.example.com:8443/api", "curl https://[REDACTED:internal-host]:8443/api", []string{"internal-host"}, nil},
		{"internal host bare suffix", "see corp.example.com.", "see [REDACTED:internal-host].", nil, nil},
		{"internal host single label", "db1.prod.internal is down", "[REDACTED:internal-host] is down", nil, nil},
		{"internal host mixed case", "Host: DB1.Corp.Example.COM", "Host: [REDACTED:internal-host]", nil, nil},
		{"internal ipv4", "connect 10.20.30.40:5432", "connect [REDACTED:internal-ip]:5432", []string{"internal-ip"}, nil},
		{"internal ipv4 cidr", "allow 10.1.0.0/16", "allow [REDACTED:internal-ip]/16", nil, nil},
		{"internal ipv6", "ping6 fd12:3456:789a::1 now", "ping6 [REDACTED:internal-ip] now", nil, nil},
		{"email under internal domain", "ops@corp.example.com", "[REDACTED:email]", nil, nil},
	})
}

// TestNegative holds ordinary text that must come through unchanged, with
// every policy option on.
func TestNegative(t *testing.T) {
	unchanged := []string{
		// Code that names passwords without containing one.
		`password := flag.String("password", "", "database password")`,
		`Password: cfg.Password,`,
		`Password: password,`,
		`password = os.Getenv("DB_PASSWORD")`,
		`self.password = password`,
		`def login(user: str, password: str) -> bool:`,
		`if password == "" {`,
		`if (password === undefined) return;`,
		`password = getPassword(user)`,
		`password = base + suffix`,
		`passwordLabel := "Enter your password"`,
		`PASSWORD_FILE=/run/secrets/db`,
		`password_min_length: 12`,
		`bypass = true`,
		`compass = "north"`,
		`PWD=/home/alice/src`,
		`case "password":`,
		`log.Printf("password reset for %s", user)`,
		// Placeholders and templates.
		`password: ${DB_PASSWORD}`,
		`password: "{{ .Values.db.password }}"`,
		`password = "%s"`,
		`password: <your-password-here>`,
		`password: "********"`,
		`fmt.Sprintf("postgres://%s:%s@%s/db", user, pass, host)`,
		`url = "smtp://${SMTP_USER}:${SMTP_PASSWORD}@mail.example.org"`,
		// Identifiers, versions and hashes.
		`id := "123e4567-e89b-12d3-a456-426614174000"`,
		`version = "1.2.3"`,
		`github.com/zricethezav/gitleaks/v8 v8.30.1 h1:PmEvCfVI7ti9dV3s5aMZUY7sS2GxRvG3yzih7E+cS3w=`,
		`"integrity": "sha512-Xo2e3EdKLLNWr3mN0TyG8pT4uZ1rIu5k2PoM8Wr5bJ6cOtU4Q2hKqVtR1ZbW6YLe7n1PmCwZf8sLkQH9DqoSTg==",`,
		`commit 3f1efb9b7705cc1cae9ebeafa8eaf95ab79d6bea`,
		`sha256sum: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08`,
		`go get golang.org/x/crypto@v0.54.0`,
		`import "@types/node";`,
		// Prose and header-building code.
		`// The API uses Bearer authentication and Basic authentication.`,
		`req.Header.Set("Authorization", "Bearer "+token)`,
		`Authorization: Bearer <token>`,
		// Public material.
		"-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUCe1nBwtGdpVgY9mi0hS9Ykt0uHswCgYIKoZIzj0EAwIw\n-----END CERTIFICATE-----",
		"-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----",
		// Addresses outside the confidential ranges, and look-alikes.
		`listen 192.168.1.10:8080 and 8.8.8.8`,
		`version 10.2.3.4.5 released`,
		`std::string s; auto v = a::b::c;`,
		`see notcorp.example.com and corp.example.com.evil.io and corp.example.community`,
		`user@localhost and root@db`,
		`the internal API`,
		// Plain C with the obvious bug the review should still see.
		"+\tstrcpy(m->text, text);",
	}
	cases := make([]redactCase, len(unchanged))
	for i, s := range unchanged {
		cases[i] = redactCase{name: s, in: s, want: s}
	}
	runCases(t, cases)
}

// TestMultilineBoundaries covers PEM blocks in the shapes they reach a diff.
func TestMultilineBoundaries(t *testing.T) {
	const body1 = "MIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM9Oi8+e2b2c1CqzrqYmMRN0BOQdZVuTtq0j"
	const body2 = "Zk3Nf9aQ1vB7xW2pL8sD4gH6jK0mR5tY3uE9cV1bN7qA2wS8dF4gH6jK0mR5tY3u"
	runCases(t, []redactCase{
		{"added in a diff",
			"@@ -0,0 +1,6 @@\n+key:\n+-----BEGIN RSA PRIVATE KEY-----\n+" + body1 + "\n+" + body2 + "\n+-----END RSA PRIVATE KEY-----\n+done\n",
			"@@ -0,0 +1,6 @@\n+key:\n+[REDACTED:pem-private-key]\n+[REDACTED:pem-private-key]\n+[REDACTED:pem-private-key]\n+[REDACTED:pem-private-key]\n+done\n",
			[]string{"pem-private-key"}, nil},
		{"removed in a diff, context around",
			" a\n------BEGIN OPENSSH PRIVATE KEY-----\n-" + body1 + "\n------END OPENSSH PRIVATE KEY-----\n b\n",
			" a\n-[REDACTED:pem-private-key]\n-[REDACTED:pem-private-key]\n-[REDACTED:pem-private-key]\n b\n", nil, nil},
		{"truncated: no END, code follows",
			"+-----BEGIN PRIVATE KEY-----\n+" + body1 + "\n+" + body2 + "\n+func main() {}\n",
			"+[REDACTED:pem-private-key]\n+[REDACTED:pem-private-key]\n+[REDACTED:pem-private-key]\n+func main() {}\n",
			[]string{"pem-private-key"}, nil},
		{"truncated at end of input",
			"key = '''\n-----BEGIN RSA PRIVATE KEY-----\n" + body1[:30],
			"key = '''\n[REDACTED:pem-private-key]\n[REDACTED:pem-private-key]", nil, nil},
		{"only the BEGIN line",
			"-----BEGIN DSA PRIVATE KEY-----",
			"[REDACTED:pem-private-key]", nil, nil},
		{"encrypted with headers and a blank line",
			"-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,3F2504E04F8911D39A0C0305E82C3301\n\n" + body1 + "\n",
			"[REDACTED:pem-private-key]\n[REDACTED:pem-private-key]\n[REDACTED:pem-private-key]\n\n[REDACTED:pem-private-key]\n", nil, nil},
		{"indented yaml block",
			"tls:\n  key: |\n    -----BEGIN EC PRIVATE KEY-----\n    " + body2 + "\n    -----END EC PRIVATE KEY-----\n  cert: x\n",
			"tls:\n  key: |\n    [REDACTED:pem-private-key]\n    [REDACTED:pem-private-key]\n    [REDACTED:pem-private-key]\n  cert: x\n", nil, nil},
		{"json string with escaped newlines",
			`{"private_key": "-----BEGIN PRIVATE KEY-----\n` + body1 + `\n-----END PRIVATE KEY-----\n", "x": 1}`,
			`{"private_key": "[REDACTED:pem-private-key]\n", "x": 1}`, nil, nil},
		{"json string truncated",
			`{"private_key": "-----BEGIN PRIVATE KEY-----\n` + body1[:20],
			`{"private_key": "[REDACTED:pem-private-key]`, nil, nil},
		{"string concatenation",
			"k := \"-----BEGIN RSA PRIVATE KEY-----\\n\" +\n\t\"" + body1 + "\\n\" +\n\t\"-----END RSA PRIVATE KEY-----\"\n",
			"k := \"[REDACTED:pem-private-key]\n\t[REDACTED:pem-private-key]\n\t[REDACTED:pem-private-key]\"\n", nil, nil},
		{"crlf line endings",
			"-----BEGIN PRIVATE KEY-----\r\n" + body1 + "\r\n-----END PRIVATE KEY-----\r\nnext\r\n",
			"[REDACTED:pem-private-key]\r\n[REDACTED:pem-private-key]\r\n[REDACTED:pem-private-key]\r\nnext\r\n", nil, nil},
		{"END far away behind code: gitleaks takes it all",
			"-----BEGIN PRIVATE KEY-----\n" + body1 + "\nfunc f() {}\n-----END PRIVATE KEY-----\n",
			"[REDACTED:private-key]\n[REDACTED:private-key]\n[REDACTED:private-key]\n[REDACTED:private-key]\n", nil, nil},
		{"two keys",
			"-----BEGIN PRIVATE KEY-----\n" + body1 + "\n-----END PRIVATE KEY-----\nmid\n-----BEGIN PRIVATE KEY-----\n" + body2 + "\n-----END PRIVATE KEY-----\n",
			"[REDACTED:pem-private-key]\n[REDACTED:pem-private-key]\n[REDACTED:pem-private-key]\nmid\n[REDACTED:pem-private-key]\n[REDACTED:pem-private-key]\n[REDACTED:pem-private-key]\n", nil, nil},
		{"pgp private key block",
			"-----BEGIN PGP PRIVATE KEY BLOCK-----\nVersion: GnuPG v2\n\n" + body1 + "\n=Zx9q\n-----END PGP PRIVATE KEY BLOCK-----\n",
			"[REDACTED:pem-private-key]\n[REDACTED:pem-private-key]\n\n[REDACTED:pem-private-key]\n[REDACTED:pem-private-key]\n[REDACTED:pem-private-key]\n", nil, nil},
	})
}

// TestTruncatedTokens covers secrets cut off by a diff hunk, a line end or
// the end of the input.
func TestTruncatedTokens(t *testing.T) {
	runCases(t, []redactCase{
		{"bearer at end of input", "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIi", "Authorization: Bearer [REDACTED:bearer-token]", nil, nil},
		{"bearer cut at line end", "+curl -H 'Authorization: Bearer 9fKx2LmQ\n+next", "+curl -H 'Authorization: Bearer [REDACTED:bearer-token]\n+next", nil, nil},
		{"unterminated quoted password", `+password = "hunter2-and-then-the-hunk-ends`, `+password = "[REDACTED:password-assignment]`, nil, nil},
		{"aws key cut to 19 chars in an assignment", `aws_key = "AKIAQX7N3PLV2KD5RTW"`, `aws_key = "[REDACTED:generic-api-key]"`, nil, nil},
		{"uri cut before the host", "smtp://bot:pw-9x@", "smtp://[REDACTED:uri-credentials]@", nil, nil},
		// Below eight characters a token fragment is not recoverable material
		// and not told apart from a word: left alone by design.
		{"short fragment", "Authorization: Bearer 9fKx2", "Authorization: Bearer 9fKx2", nil, nil},
	})
}

func TestRepeatedSecretIsRedactedEverywhere(t *testing.T) {
	runCases(t, []redactCase{
		{"reused literal",
			"dbPassword = \"Tr0ub4dor&3-staging\"\nlog.Println(\"connecting with Tr0ub4dor&3-staging\")\n",
			"dbPassword = \"[REDACTED:password-assignment]\"\nlog.Println(\"connecting with [REDACTED:password-assignment]\")\n", nil, nil},
		{"key in a comment too",
			"// old key was AKIAQX7N3PLV2KD5RTWE\nkey := \"AKIAQX7N3PLV2KD5RTWE\"\n",
			"// old key was [REDACTED:aws-access-token]\nkey := \"[REDACTED:aws-access-token]\"\n", nil, nil},
		{"short values are not searched for", "pass := \"abc\"\nabc := 1\n", "pass := \"[REDACTED:password-assignment]\"\nabc := 1\n", nil, nil},
	})
}

func TestMatchesCarryLinesNotSecrets(t *testing.T) {
	r := newRedactor(t, fullPolicy)
	in := "line one\npassword = \"hunter2\"\n\nAuthorization: Bearer 8f2Kq9xLm4Zt7Rw1Vb6Nc3Hd\nmail alice@example.com and bob@example.com\n"
	_, ms, err := r.Redact(in)
	if err != nil {
		t.Fatal(err)
	}
	want := []Match{{"password-assignment", 2}, {"bearer-token", 4}, {"email", 5}}
	if len(ms) != len(want) {
		t.Fatalf("matches = %v, want %v", ms, want)
	}
	for i := range want {
		if ms[i] != want[i] {
			t.Errorf("match %d = %v, want %v", i, ms[i], want[i])
		}
	}
}

func TestRedactIsDeterministicAndConcurrent(t *testing.T) {
	in := strings.Repeat("password = \"hunter2\"\nkey AKIAQX7N3PLV2KD5RTWE at 10.0.0.1 alice@example.com\n-----BEGIN PRIVATE KEY-----\nMIIEv\n", 20)
	r1, r2 := newRedactor(t, fullPolicy), newRedactor(t, fullPolicy)
	want, _, err := r1.Redact(in)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan string, 16)
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func(r *Redactor) {
			defer wg.Done()
			got, _, err := r.Redact(in)
			if err != nil || got != want {
				errs <- "different output"
			}
		}([]*Redactor{r1, r2}[i%2])
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
	again, ms, err := r1.Redact(want)
	if err != nil || again != want || len(ms) != 0 {
		t.Errorf("redacting the output again changed it (%d matches, %v)", len(ms), err)
	}
}

func TestNewRejectsBadPolicy(t *testing.T) {
	for _, p := range []Policy{
		{ConfidentialCIDRs: []string{"10.0.0.0/33"}},
		{ConfidentialCIDRs: []string{"corp"}},
		{ConfidentialDomains: []string{"exa mple.com"}},
		{ConfidentialDomains: []string{"*.corp.example.com"}},
		{ConfidentialDomains: []string{""}},
	} {
		if _, err := New(p); failure.Classify(err) != failure.InternalBug {
			t.Errorf("New(%+v) = %v, want an INTERNAL_BUG configuration error", p, err)
		}
	}
}

func TestDetectorPanicBlocks(t *testing.T) {
	r := newRedactor(t, plainPolicy)
	r.own = append(r.own, detector{id: "boom", find: func(string) ([]span, error) { panic("detector bug") }})
	out, ms, err := r.Redact("anything")
	if err == nil || out != "" || ms != nil {
		t.Fatalf("Redact = %q, %v, %v; want an error and nothing else", out, ms, err)
	}
	if failure.Classify(err) != failure.InternalBug {
		t.Errorf("class = %s", failure.Classify(err))
	}
}

func TestNonConvergenceBlocks(t *testing.T) {
	r := newRedactor(t, plainPolicy)
	// A rule that always finds something, even in its own tokens' output.
	r.own = append(r.own, detector{id: "always", find: func(text string) ([]span, error) {
		i := strings.Index(text, "REDACTED:always]")
		if i < 0 {
			return []span{{start: 0, end: 1}}, nil
		}
		return []span{{start: i - 1, end: i + 17}}, nil // the token plus one byte after it
	}})
	if _, _, err := r.Redact("abcdefghijklmnop"); err == nil {
		t.Fatal("a non-converging rule did not block")
	}
}

func BenchmarkRedactDiff(b *testing.B) {
	r := newRedactor(b, fullPolicy)
	var sb strings.Builder
	for i := 0; i < 2000; i++ {
		sb.WriteString("+\tif err := client.Do(ctx, req); err != nil { return fmt.Errorf(\"call %d: %w\", i, err) }\n")
	}
	in := sb.String()
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		if _, _, err := r.Redact(in); err != nil {
			b.Fatal(err)
		}
	}
}
