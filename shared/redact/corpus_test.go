package redact

import (
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"strings"

	ahocorasick "github.com/BobuSumisu/aho-corasick"
)

// The benchmark corpus: a generated diff with secrets of every class the
// spec names planted at random lines among ordinary code, so that recall
// (found/planted) is measured rather than assumed, for this package and for
// gitleaks alike. Every planted value is random, so "the value no longer
// appears in the output" is exactly "it was found".

// planted is one secret in the corpus.
type planted struct {
	class  string
	values []string // each must be gone from a redaction that found it
}

// corpusPolicy is the policy under which the confidential classes count.
var corpusPolicy = Policy{RedactEmails: true, ConfidentialDomains: []string{"corp.example.com"}, ConfidentialCIDRs: []string{"10.0.0.0/8"}}

const (
	alnum   = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	upperD  = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	b64     = alnum + "+/"
	lowerAl = "abcdefghijklmnopqrstuvwxyz"
)

func rnd(r *rand.Rand, set string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = set[r.IntN(len(set))]
	}
	return string(b)
}

// mixed returns a random token with at least one upper, lower and digit.
func mixed(r *rand.Rand, n int) string {
	return rnd(r, "ABCDEFGHJKLMNPQRSTUVWXYZ", 1) + rnd(r, lowerAl, 1) + rnd(r, "23456789", 1) + rnd(r, alnum, n-3)
}

// plant returns the lines of one planted secret of class c.
func plant(r *rand.Rand, c string) ([]string, planted) {
	p := planted{class: c}
	v := func(s string) string { p.values = append(p.values, s); return s }
	var lines []string
	switch c {
	case "aws-access-key":
		lines = []string{"+aws_access_key_id = " + v("AKIA"+rnd(r, upperD, 16))}
	case "aws-secret-key":
		lines = []string{"+aws_secret_access_key = " + v(mixed(r, 40))}
	case "github-token":
		lines = []string{`+	token := "` + v("ghp_"+rnd(r, alnum, 36)) + `"`}
	case "slack-token":
		lines = []string{"+SLACK_BOT_TOKEN=" + v(fmt.Sprintf("xoxb-%d-%d-%s", 1000000000+r.IntN(8999999999), 1000000000000+r.Int64N(8999999999999), rnd(r, alnum, 24)))}
	case "stripe-key":
		lines = []string{`+stripe.Key = "` + v("sk_live_"+rnd(r, alnum, 32)) + `"`}
	case "generic-high-entropy":
		k := []string{"client_secret", "apiKey", "auth_token", "private_token", "access_key"}[r.IntN(5)]
		lines = []string{fmt.Sprintf(`+    %s: "%s"`, k, v(mixed(r, 32)))}
	case "bearer-token":
		lines = []string{`+# curl -H "Authorization: Bearer ` + v(mixed(r, 28)) + `" https://api.example.org/v1/items`}
	case "password-assignment":
		w := []string{"Summer", "Winter", "Dragon", "Monkey", "Sunshine"}[r.IntN(5)]
		pw := fmt.Sprintf("%s%d%s", w, 1000+r.IntN(9000), []string{"!", "#", "$", "?"}[r.IntN(4)])
		k := []string{"password", "db_password", "DB_PASS", "adminPassword"}[r.IntN(4)]
		lines = []string{fmt.Sprintf(`+%s = "%s"`, k, v(pw))}
	case "private-key":
		body := []string{v(rnd(r, b64, 64)), v(rnd(r, b64, 64)), v(rnd(r, b64, 64)), v(rnd(r, b64, 40) + "==")}
		lines = append([]string{"+-----BEGIN RSA PRIVATE KEY-----"}, prefix("+", body)...)
		lines = append(lines, "+-----END RSA PRIVATE KEY-----")
	case "smtp-credentials":
		user, pw := "alerts", mixed(r, 14)
		if r.IntN(2) == 0 {
			lines = []string{"+C: AUTH PLAIN " + v(base64.StdEncoding.EncodeToString([]byte("\x00"+user+"\x00"+pw)))}
		} else {
			lines = []string{`+smtp_password = "` + v(pw) + `"`}
		}
	case "uri-credentials":
		scheme := []string{"smtp", "postgres", "mongodb", "amqp", "redis"}[r.IntN(5)]
		lines = []string{fmt.Sprintf(`+	dsn := "%s://app:%s@db.example.org:5432/main"`, scheme, v(mixed(r, 16)))}
	case "encoded-secret":
		inner := "aws_secret_access_key=" + mixed(r, 40)
		lines = []string{"+  config.ini: " + v(base64.StdEncoding.EncodeToString([]byte(inner)))}
	case "email":
		lines = []string{"+// maintainer: " + v(rnd(r, lowerAl, 6)+"."+rnd(r, lowerAl, 5)+"@example.com")}
	case "confidential-host":
		lines = []string{`+	endpoint := "https://` + v(rnd(r, lowerAl, 6)+fmt.Sprint(r.IntN(90)+10)+".corp.example.com") + `/v2"`}
	case "confidential-ip":
		lines = []string{`+	addr := "` + v(fmt.Sprintf("10.%d.%d.%d", r.IntN(256), r.IntN(256), 1+r.IntN(254))) + `:8080"`}
	default:
		panic("unknown class " + c)
	}
	return lines, p
}

var corpusClasses = []string{"aws-access-key", "aws-secret-key", "github-token", "slack-token", "stripe-key",
	"generic-high-entropy", "bearer-token", "password-assignment", "private-key", "smtp-credentials",
	"uri-credentials", "encoded-secret", "email", "confidential-host", "confidential-ip"}

func prefix(p string, lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = p + l
	}
	return out
}

// filler is ordinary code, some of it holding rule keywords (key, token,
// api, auth, secret, password, @) without any secret, as real diffs do.
var filler = []string{
	"+\tif err := client.Do(ctx, req); err != nil {",
	"+\t\treturn fmt.Errorf(\"fetch %s: %w\", key, err)",
	"+\t}",
	" func (s *Store) Get(ctx context.Context, key string) (*Item, error) {",
	"-\ttoken, err := s.auth.Token(ctx)",
	"+\ttoken, err := s.auth.TokenWithRetry(ctx, 3)",
	"+// The API key is read from the secret store at start-up; see config.go.",
	"+\tpassword := os.Getenv(\"DB_PASSWORD\")",
	"+\tlog.Printf(\"loaded %d items for user %s\", len(items), user.ID)",
	" \tfor i, item := range items {",
	"+\t\tif item.ExpiresAt.Before(now) { continue }",
	"+import com.example.billing.api.InvoiceService;",
	"+    public Invoice findById(long id) throws NotFoundException {",
	"+        return repository.findById(id).orElseThrow(NotFoundException::new);",
	"+def authenticate(request, password: str) -> bool:",
	"+    return check_password(password, request.user.password_hash)",
	"+  replicas: 3",
	"+  image: registry.example.org/team/service:1.24.3",
	"@@ -120,7 +120,9 @@ func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {",
	"+\tsum := sha256.Sum256(body) // 3f2a9c0d7e1b4a5f6c8d9e0f1a2b3c4d",
	"+\tid := uuid.MustParse(\"123e4567-e89b-12d3-a456-426614174000\")",
	"+    \"integrity\": \"sha512-Vq0sR3bq8kqNz5nOUlGs6J1bqkM0b9dJHg3Wz2tF4aQ==\",",
	"+\t// TODO(alice): handle the @deprecated annotation",
	"+SELECT id, name FROM accounts WHERE token_expires_at < NOW();",
	"+\tmetrics.Put(\"SecretsLoaded\", 1, obs.Count, nil)",
	"+   * Sends the bearer token only over TLS; see RFC 6750 section 5.",
	"+\tconst maxKeyLength = 256",
	"+\tfmt.Println(\"version 2.14.1 built at 2024-05-01T10:00:00Z\")",
}

// genCorpus returns about size bytes of diff with one planted secret per
// every ~every lines, cycling through all classes.
func genCorpus(seed uint64, size, every int) (string, []planted) {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	var b strings.Builder
	var ps []planted
	n := 0
	for b.Len() < size {
		if n%every == every-1 {
			lines, p := plant(r, corpusClasses[len(ps)%len(corpusClasses)])
			ps = append(ps, p)
			for _, l := range lines {
				b.WriteString(l)
				b.WriteByte('\n')
			}
		} else {
			b.WriteString(filler[r.IntN(len(filler))])
			b.WriteByte('\n')
		}
		n++
	}
	return b.String(), ps
}

// recall reports found/planted overall and per class for a redacted text.
func recall(out string, ps []planted) (float64, map[string][2]int) {
	var values []string
	owner := []int{}
	for i, p := range ps {
		for _, v := range p.values {
			values = append(values, v)
			owner = append(owner, i)
		}
	}
	leaked := map[int]bool{}
	ahocorasick.NewTrieBuilder().AddStrings(values).Build().Walk([]byte(out), func(_, _, pattern int64) bool {
		leaked[owner[pattern]] = true
		return true
	})
	per := map[string][2]int{}
	found := 0
	for i, p := range ps {
		c := per[p.class]
		c[1]++
		if !leaked[i] {
			c[0]++
			found++
		}
		per[p.class] = c
	}
	return float64(found) / float64(len(ps)), per
}
