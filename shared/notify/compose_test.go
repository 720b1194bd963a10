package notify

import (
	"bytes"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/mail"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/criticizer/criticizer/shared/delivery"
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/letter"
)

var fixedDate = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

var testKey = delivery.Key{Changelist: 12345, Recipient: "alice@example.com", ReviewVersion: 1}

func newFinding(id, sev, file string, line int) domain.Finding {
	return domain.Finding{ID: id, Severity: sev, Category: "correctness", Title: "title " + id,
		File: file, Line: line, Message: "message " + id}
}

// content is a letter's content and its envelope, as the tests compose them.
type content struct {
	letter.Content
	Envelope
}

// compose is Compose of c.
func compose(k delivery.Key, c content) (*Message, error) { return Compose(k, c.Content, c.Envelope) }

func testContent() content {
	return content{Envelope: Envelope{From: "Criticizer <criticizer@example.com>", HTML: true, Date: fixedDate}, Content: letter.Content{
		Author:      "alice",
		Description: "Fix login bug\n\nLonger explanation that stays out of the mail.",
		JobID:       "job-0001",
		Review: domain.ReviewResult{
			SchemaVersion: "1.0", PromptVersion: "1.2.0",
			Summary: "Two issues in the login path.",
			Findings: []domain.Finding{
				{ID: "F2", Severity: "low", Category: "style", Title: "Naming", File: "//depot/app/b.go", Line: 3,
					Message: "Rename the variable."},
				{ID: "F1", Severity: "high", Category: "security", Title: "SQL built from input",
					File: "//depot/app/a.go", Line: 42, EndLine: 45, Confidence: "high", RuleID: "SEC-1",
					Message: "The query concatenates user input.\nSecond line.", Suggestion: "Use a parameterised query."},
				{ID: "F3", Severity: "low", Category: "test", Title: "Missing test", File: "//depot/app/a.go", Line: 7,
					Message: "No test covers this."},
			},
		},
	}}
}

// parsed is a rendered message read back the way a mail client would.
type parsed struct {
	header mail.Header
	text   string
	html   string
}

func parse(t *testing.T, raw []byte) parsed {
	t.Helper()
	msg, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("message does not parse: %v", err)
	}
	p := parsed{header: msg.Header}
	mt, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil {
		t.Fatalf("content type: %v", err)
	}
	read := func(ct string, r io.Reader) {
		b, err := io.ReadAll(r)
		if err != nil {
			t.Fatalf("read part: %v", err)
		}
		switch {
		case strings.HasPrefix(ct, "text/plain"):
			p.text = string(b)
		case strings.HasPrefix(ct, "text/html"):
			p.html = string(b)
		}
	}
	if !strings.HasPrefix(mt, "multipart/") {
		if msg.Header.Get("Content-Transfer-Encoding") != "quoted-printable" {
			t.Fatalf("unexpected transfer encoding %q", msg.Header.Get("Content-Transfer-Encoding"))
		}
		read(mt, quotedprintable.NewReader(msg.Body))
		return p
	}
	mr := multipart.NewReader(msg.Body, params["boundary"])
	for {
		part, err := mr.NextPart() // decodes quoted-printable
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("next part: %v", err)
		}
		read(part.Header.Get("Content-Type"), part)
	}
	return p
}

func renderMail(t *testing.T, k delivery.Key, c content) ([]byte, *Message) {
	t.Helper()
	m, err := compose(k, c)
	if err != nil {
		t.Fatalf("Compose: %v", err)
	}
	b, err := m.Bytes()
	if err != nil {
		t.Fatalf("Bytes: %v", err)
	}
	return b, m
}

func TestComposeDeterministic(t *testing.T) {
	reversed := testContent()
	fs := reversed.Review.Findings
	reversed.Review.Findings = []domain.Finding{fs[2], fs[1], fs[0]}

	noDate := testContent()
	noDate.Date = time.Time{}

	tests := []struct {
		name      string
		a, b      content
		ignoreDay bool // compare without the Date header
	}{
		{"same input", testContent(), testContent(), false},
		{"finding order does not matter", testContent(), reversed, false},
		{"default date is the only difference", testContent(), noDate, true},
	}
	dateLine := regexp.MustCompile(`(?m)^Date: .*\r\n`)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, _ := renderMail(t, testKey, tt.a)
			b, _ := renderMail(t, testKey, tt.b)
			if tt.ignoreDay {
				a, b = dateLine.ReplaceAll(a, nil), dateLine.ReplaceAll(b, nil)
			}
			if !bytes.Equal(a, b) {
				t.Errorf("renderings differ:\n%s\n----\n%s", a, b)
			}
		})
	}

	// Rendering one Message twice must also be stable (no go-mail state).
	_, m := renderMail(t, testKey, testContent())
	x, _ := m.Bytes()
	y, _ := m.Bytes()
	if !bytes.Equal(x, y) {
		t.Error("rendering the same Message twice differs")
	}
}

func TestComposeSubject(t *testing.T) {
	long := strings.Repeat("word ", 30)
	tests := []struct {
		name     string
		findings []domain.Finding
		desc     string
		want     string
	}{
		{"none", nil, "", "[Criticizer] CL 12345 v1: no findings"},
		{"one low", []domain.Finding{newFinding("a", "low", "f", 1)}, "", "[Criticizer] CL 12345 v1: 1 finding"},
		{"brief example", []domain.Finding{newFinding("a", "high", "f", 1), newFinding("b", "low", "f", 2), newFinding("c", "info", "f", 3)},
			"", "[Criticizer] CL 12345 v1: 3 findings (1 high)"},
		{"critical and high", []domain.Finding{newFinding("a", "high", "f", 1), newFinding("b", "critical", "f", 2), newFinding("c", "high", "f", 3)},
			"", "[Criticizer] CL 12345 v1: 3 findings (1 critical, 2 high)"},
		{"description first line", nil, "Fix login\nsecond line", "[Criticizer] CL 12345 v1: no findings - Fix login"},
		{"blank first line skipped", nil, "\n  \nReal title", "[Criticizer] CL 12345 v1: no findings - Real title"},
		{"long description truncated", nil, long,
			"[Criticizer] CL 12345 v1: no findings - " + strings.TrimSpace(long[:57]) + "..."},
		{"control characters", nil, "a\tb\x00c\rBcc: evil@x.org",
			"[Criticizer] CL 12345 v1: no findings - a b c Bcc: evil@x.org"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := testContent()
			c.Review.Findings = tt.findings
			c.Description = tt.desc
			raw, m := renderMail(t, testKey, c)
			if m.Subject != tt.want {
				t.Errorf("Subject = %q, want %q", m.Subject, tt.want)
			}
			p := parse(t, raw)
			if got, _ := new(mime.WordDecoder).DecodeHeader(p.header.Get("Subject")); got != tt.want {
				t.Errorf("Subject header = %q, want %q", got, tt.want)
			}
			if p.header.Get("Bcc") != "" {
				t.Error("a Bcc header was injected")
			}
		})
	}
}

func TestComposeBodyGrouping(t *testing.T) {
	c := testContent()
	c.Review.Findings = append(c.Review.Findings,
		newFinding("F9", "critical", "//depot/app/z.go", 1),
		newFinding("F8", "bogus", "//depot/app/y.go", 9), // not in the enum: still shown
	)
	raw, _ := renderMail(t, testKey, c)
	p := parse(t, raw)

	// Files in order of their most severe finding, findings numbered across
	// files, most severe first within a file.
	order := []string{
		"5 findings: 1 critical, 1 high, 2 low, 1 other.",
		"//depot/app/z.go (1)", "1. [CRITICAL] //depot/app/z.go:1  title F9",
		"//depot/app/a.go (2)", "2. [HIGH] //depot/app/a.go:42-45  SQL built from input",
		"   [security, confidence: high, rule: SEC-1]",
		"   The query concatenates user input.\r\n   Second line.",
		"   Suggestion: Use a parameterised query.",
		"3. [LOW] //depot/app/a.go:7  Missing test",
		"//depot/app/b.go (1)", "4. [LOW] //depot/app/b.go:3  Naming",
		"//depot/app/y.go (1)", "5. [OTHER] //depot/app/y.go:9  title F8",
		"Reference: " + testKey.IdempotencyToken(),
	}
	pos := 0
	for _, want := range order {
		i := strings.Index(p.text[pos:], want)
		if i < 0 {
			t.Fatalf("text body lacks %q after offset %d:\n%s", want, pos, p.text)
		}
		pos += i + len(want)
	}
	for _, want := range []string{"Author:      alice", "Description: Fix login bug", "Job:         job-0001", "Two issues in the login path."} {
		if !strings.Contains(p.text, want) {
			t.Errorf("text body lacks %q", want)
		}
	}
	for _, want := range []string{"<h3><code>//depot/app/z.go</code> (1)</h3>", "<code>//depot/app/a.go:42-45</code>", "Use a parameterised query."} {
		if !strings.Contains(p.html, want) {
			t.Errorf("html body lacks %q", want)
		}
	}
}

func TestComposeNoFindings(t *testing.T) {
	c := testContent()
	c.Review.Findings = nil
	c.HTML = false
	raw, m := renderMail(t, testKey, c)
	if m.HTML != "" {
		t.Error("HTML part rendered although not asked for")
	}
	p := parse(t, raw)
	if !strings.Contains(p.text, "No findings.") {
		t.Errorf("text body lacks 'No findings.':\n%s", p.text)
	}
	if ct := p.header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Errorf("Content-Type = %q, want a single text/plain part", ct)
	}
}

func TestComposeHeaders(t *testing.T) {
	raw, m := renderMail(t, testKey, testContent())
	h := parse(t, raw).header
	tests := []struct {
		header, want string
	}{
		{"Message-Id", testKey.MessageID("example.com")},
		{"X-Criticizer-Key", testKey.IdempotencyToken()},
		{"X-Criticizer-Job", "job-0001"},
		{"Date", fixedDate.Format(time.RFC1123Z)},
		{"To", "<alice@example.com>"},
		{"From", `"Criticizer" <criticizer@example.com>`},
		{"Auto-Submitted", "auto-generated"},
		{"Mime-Version", "1.0"},
	}
	for _, tt := range tests {
		if got := strings.TrimSpace(h.Get(tt.header)); got != tt.want {
			t.Errorf("%s = %q, want %q", tt.header, got, tt.want)
		}
	}
	if m.MessageID != testKey.MessageID("example.com") {
		t.Errorf("Message.MessageID = %q", m.MessageID)
	}
	if ct := h.Get("Content-Type"); !strings.HasPrefix(ct, "multipart/alternative") {
		t.Errorf("Content-Type = %q, want multipart/alternative", ct)
	}
	// Nothing random may sneak in through go-mail's defaults.
	for _, k := range []string{"User-Agent", "X-Mailer"} {
		if strings.Contains(h.Get(k), "go-mail") {
			t.Errorf("%s = %q leaks the library version", k, h.Get(k))
		}
	}
}

func TestComposeNoSecrets(t *testing.T) {
	const secret = "sk-live-DO-NOT-SEND-1234567890"
	c := testContent()
	c.Description = "Rotate keys\npassword=" + secret // only the first line is used
	c.Review.Meta = map[string]any{"api_key": secret, "raw_response": secret}
	c.Review.Findings[0].Title = `<script>alert("x")</script>`
	raw, _ := renderMail(t, testKey, c)
	p := parse(t, raw)
	for name, s := range map[string]string{"raw": string(raw), "text": p.text, "html": p.html} {
		if strings.Contains(s, secret) {
			t.Errorf("%s contains the secret", name)
		}
	}
	if strings.Contains(p.html, "<script>") {
		t.Error("html body contains an unescaped <script>")
	}
}

func TestComposeErrors(t *testing.T) {
	tests := []struct {
		name  string
		key   delivery.Key
		from  string
		class failure.Class
	}{
		{"bad recipient", delivery.Key{Changelist: 1, Recipient: "not-an-address", ReviewVersion: 1}, "c@example.com", failure.SchemaInvalid},
		{"zero version", delivery.Key{Changelist: 1, Recipient: "a@example.com", ReviewVersion: 0}, "c@example.com", failure.SchemaInvalid},
		{"bad from", testKey, "nobody", failure.InternalBug},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := testContent()
			c.From = tt.from
			_, err := compose(tt.key, c)
			if err == nil {
				t.Fatal("Compose succeeded")
			}
			var fe *failure.Error
			if !errors.As(err, &fe) || fe.Class != tt.class {
				t.Errorf("error %v has class %q, want %q", err, failure.Classify(err), tt.class)
			}
		})
	}
}

// With a delivery key, every place the e-mail names its delivery (the
// Message-ID, X-Criticizer-Key, the reference line) carries the keyed token
// the outbox row keeps, never the unkeyed hash of the address: the
// provider's evidence is found by the row alone, and a leaked header cannot
// be tested against a list of addresses.
func TestComposeWithDeliveryKey(t *testing.T) {
	key, err := delivery.NewSecret("compose-test-delivery-key-0123456789abcdef")
	if err != nil {
		t.Fatal(err)
	}
	c := testContent()
	c.Secret = key
	raw, m := renderMail(t, testKey, c)
	p := parse(t, raw)
	token := key.Token(testKey)
	if want := delivery.MessageIDOf(testKey.Changelist, testKey.ReviewVersion, token, "example.com"); m.MessageID != want ||
		strings.TrimSpace(p.header.Get("Message-Id")) != want {
		t.Errorf("Message-ID %q / %q, want %q", m.MessageID, p.header.Get("Message-Id"), want)
	}
	if got := strings.TrimSpace(p.header.Get("X-Criticizer-Key")); got != token || m.Token != token {
		t.Errorf("X-Criticizer-Key %q, Token %q; want %q", got, m.Token, token)
	}
	if !strings.Contains(p.text, "Reference: "+token) || strings.Contains(string(raw), testKey.IdempotencyToken()[:32]) {
		t.Errorf("the body's reference is not the keyed token, or the unkeyed one leaks:\n%s", p.text)
	}
}

// TestEmailSaysWhatWasWithheldAsDismissed: findings the notify stage
// withheld as a kind reviewers under the path dismissed repeatedly are
// counted in both parts of the e-mail, as the Swarm summary counts them,
// with the commands that list and lift them; none withheld, no line.
func TestEmailSaysWhatWasWithheldAsDismissed(t *testing.T) {
	for _, tc := range []struct {
		withheld int
		want     string
	}{
		{0, ""},
		{1, "1 finding withheld as repeatedly dismissed here (criticizer outcomes suppressions lists them; criticizer outcomes allow reports them again)."},
		{3, "3 findings withheld as repeatedly dismissed here (criticizer outcomes suppressions lists them; criticizer outcomes allow reports them again)."},
	} {
		c := testContent()
		c.Review.Meta = domain.ReviewMeta{WithheldAsDismissed: tc.withheld}.Map()
		m, err := compose(testKey, c)
		if err != nil {
			t.Fatal(err)
		}
		for part, body := range map[string]string{"text": m.Text, "html": m.HTML} {
			said := strings.Contains(body, "withheld as repeatedly dismissed")
			if tc.want == "" && said {
				t.Errorf("%d withheld: the %s part speaks of withheld findings:\n%s", tc.withheld, part, body)
			}
			if tc.want != "" && !strings.Contains(body, tc.want) {
				t.Errorf("%d withheld: the %s part lacks %q:\n%s", tc.withheld, part, tc.want, body)
			}
		}
	}
}
