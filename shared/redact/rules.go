package redact

import (
	"fmt"
	"net/netip"
	"regexp"
	"slices"
	"strings"
	"unicode"
)

// ---- password-assignment ----

var (
	// key [annotation] operator value (`password: str = "x"`): a quoted
	// literal on one line (closing quote optional), or a bare config value.
	assignRe = lazy(`([A-Za-z_][A-Za-z0-9_.\-]*)["']?[ \t]*(?::[ \t]*[A-Za-z_][A-Za-z0-9_.\[\]]*[ \t]*)?(:=|==|!=|=>|=|:)[ \t]*(?:"((?:[^"\\\n]|\\.)*)"?|'((?:[^'\\\n]|\\.)*)'?|` + "`([^`\\n]*)`?" + `|([^\s"'` + "`" + `,;&)\]}<>]+))`)
	// <password>hunter2</password>
	xmlRe = lazy(`<([A-Za-z_][A-Za-z0-9_.:\-]*)>([^<\n]{1,256})</`)
	// CREATE USER … IDENTIFIED BY 'x', ALTER ROLE … WITH PASSWORD 'x'
	sqlRe = lazy(`(?i)\b(?:identified\s+by|with\s+(?:encrypted\s+)?password)\s+'([^'\n]{1,256})'`)

	// The secret-naming word must end the key (but for suffixes that still
	// hold it): passwordLabel or password_file are not assignments.
	passwordKeyRe = lazy(`(passw(?:or)?d|passwort|passwd|passphrase|passcode|pwd|pass|secret)(?:[_.\-]?(?:hash|value|val|str|string|plain|plaintext|enc|encrypted|b64|base64))?[_.\-]?[0-9]*$`)

	placeholderRe = lazy(`^(?:\$\{[^}]*\}|\$\([^)]*\)|\$[A-Za-z_][A-Za-z0-9_]*|\{\{.*\}\}|%\(?[A-Za-z_]*\)?[sdv]|%[sdvq]|%\[[0-9]+\][sdvq]|\{[0-9]*\}|<[^>]*>|\*+|%[A-Za-z_][A-Za-z0-9_]*%|@[A-Za-z_]+@)$`)
	memberRe      = lazy(`^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+$`)
)

// isPasswordKey reports whether an assignment's key names a password-like
// secret.
func isPasswordKey(key string) bool {
	key = strings.Trim(key, `"'`)
	lower := strings.ToLower(key)
	loc := passwordKeyRe().FindStringSubmatchIndex(lower)
	if loc == nil {
		return false
	}
	word := lower[loc[2]:loc[3]]
	if word != "pass" && word != "pwd" {
		return true
	}
	// "pass" and "pwd" are too short to stand inside a word (bypass,
	// compass): they need a boundary before them.
	i := loc[2]
	if i == 0 || strings.ContainsRune("._-", rune(key[i-1])) {
		return true
	}
	return unicode.IsUpper(rune(key[i])) && !unicode.IsUpper(rune(key[i-1]))
}

// plausibleSecret: a literal that is no placeholder, format verb or redaction.
func plausibleSecret(v string) bool {
	v = strings.TrimSpace(v)
	return v != "" && !placeholderRe().MatchString(v) && !strings.Contains(v, "[REDACTED:")
}

var codeTypes = map[string]bool{
	"str": true, "string": true, "bytes": true, "int": true, "bool": true, "any": true,
	"object": true, "secretstr": true, "optional": true, "none": true, "null": true,
	"nil": true, "true": true, "false": true, "undefined": true, "yes": true, "no": true,
	"on": true, "off": true, "required": true, "char": true, "text": true,
}

// plausibleBareValue: an unquoted value after = or : that is a configured
// secret (password=hunter2), not code passing a variable along.
func plausibleBareValue(v, key, op, rest string) bool {
	if op != "=" && op != ":" {
		return false // :=, ==, => with a bare value is code, not configuration
	}
	if !plausibleSecret(v) || strings.ContainsAny(v[:1], "$%{<([@*&!=./\\") || strings.ContainsAny(v, "()") {
		return false
	}
	if memberRe().MatchString(v) || codeTypes[strings.ToLower(v)] {
		return false
	}
	if isPasswordKey(v) || strings.EqualFold(v, strings.Trim(key, `"'`)) {
		return false // Password: password, password = db_password
	}
	// An expression continues (a + b, x[0], f(x)); "hunter2 (rotated)" is prose.
	if rest != "" && strings.ContainsRune("([.", rune(rest[0])) {
		return false
	}
	if next := strings.TrimLeft(rest, " \t"); next != "" && strings.ContainsRune("+?", rune(next[0])) {
		return false
	}
	return true
}

func findPasswordAssignments(text string) []span {
	var spans []span
	for pos := 0; pos < len(text); {
		m := assignRe().FindStringSubmatchIndex(text[pos:])
		if m == nil {
			break
		}
		for i := range m {
			if m[i] >= 0 {
				m[i] += pos
			}
		}
		key := text[m[2]:m[3]]
		if !isPasswordKey(key) {
			// Resume right after the key, not after the value: the value of
			// url = "…;password=x;…" holds the assignment that matters.
			pos = m[3]
			continue
		}
		pos = m[1]
		op := text[m[4]:m[5]]
		if m[12] < 0 { // a quoted literal: "…", '…' or `…`
			for g := 6; g <= 10; g += 2 {
				if m[g] >= 0 && plausibleSecret(text[m[g]:m[g+1]]) {
					spans = append(spans, span{start: m[g], end: m[g+1]})
				}
			}
		} else {
			end := m[13]
			if end < len(text) && text[end] == '&' && !(m[2] > 0 && (text[m[2]-1] == '?' || text[m[2]-1] == '&')) {
				// Outside a URL query, '&' is part of the value
				// (password=Tr0ub4dor&3); inside one it separates parameters.
				for end < len(text) && !strings.ContainsRune(" \t\r\n\"'`,;)]}<>", rune(text[end])) {
					end++
				}
			}
			if end > m[12] && plausibleBareValue(text[m[12]:end], key, op, text[end:]) {
				spans = append(spans, span{start: m[12], end: end})
			}
		}
	}
	for _, m := range xmlRe().FindAllStringSubmatchIndex(text, -1) {
		if isPasswordKey(text[m[2]:m[3]]) && plausibleSecret(text[m[4]:m[5]]) {
			spans = append(spans, span{start: m[4], end: m[5]})
		}
	}
	for _, m := range sqlRe().FindAllStringSubmatchIndex(text, -1) {
		if plausibleSecret(text[m[2]:m[3]]) {
			spans = append(spans, span{start: m[2], end: m[3]})
		}
	}
	return spans
}

// ---- pem-private-key ----

var (
	pemBeginRe = lazy(`(?i)-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----`)
	pemEndRe   = lazy(`(?i)-----END[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----`)
	// A key body line, without diff marker, indentation, quotes, concatenation.
	pemBodyRe   = lazy(`^["']?[A-Za-z0-9+/=]+(?:\\n)*["']?[ \t]*[+,;]?$`)
	pemHeaderRe = lazy(`^(?:Proc-Type|DEK-Info|Comment|Version|Hash|Charset):`)
)

// findPEMKeys redacts private key blocks from BEGIN to END; without a usable
// END (truncated, or separated by other lines) the BEGIN line and every
// following line of key material or PEM header.
func findPEMKeys(text string) []span {
	var spans []span
	begins := pemBeginRe().FindAllStringIndex(text, -1)
	for i, b := range begins {
		limit := len(text)
		if i+1 < len(begins) {
			limit = begins[i+1][0]
		}
		if e := pemEndRe().FindStringIndex(text[b[1]:limit]); e != nil {
			end := b[1] + e[1]
			if allKeyLines(text[b[1] : b[1]+e[0]]) {
				spans = append(spans, span{start: b[0], end: end})
				continue
			}
		}
		end := strings.IndexByte(text[b[1]:limit], '\n')
		if end < 0 {
			spans = append(spans, span{start: b[0], end: limit})
			continue
		}
		end += b[1]
		afterHeader := false
		for end < limit {
			next := strings.IndexByte(text[end+1:limit], '\n')
			lineEnd := limit
			if next >= 0 {
				lineEnd = end + 1 + next
			}
			body, header := keyLine(text[end+1 : lineEnd])
			if !(body || header || (afterHeader && isBlank(text[end+1:lineEnd]))) {
				break
			}
			afterHeader = header
			end = lineEnd
		}
		spans = append(spans, span{start: b[0], end: end})
	}
	return spans
}

// allKeyLines: the lines between BEGIN and END are key material only.
func allKeyLines(between string) bool {
	lines := strings.Split(between, "\n")
	for i, l := range lines {
		if i == 0 || i == len(lines)-1 {
			continue // the rest of the BEGIN line and the start of the END line
		}
		body, header := keyLine(l)
		if !body && !header && !isBlank(l) {
			return false
		}
	}
	return true
}

func keyLine(line string) (body, header bool) {
	l := strings.TrimRight(diffLinePrefix().ReplaceAllString(line, ""), " \t\r")
	return pemBodyRe().MatchString(l), pemHeaderRe().MatchString(l)
}

func isBlank(s string) bool { return strings.Trim(s, "+- \t\r") == "" }

// ---- uri-credentials, smtp-auth, bearer-token ----

var (
	// scheme://user:password@host: the userinfo runs to the last '@' (people
	// write '@' unescaped), and no host is needed (a cut URI keeps the password).
	uriCredRe  = lazy(`(?i)\b[a-z][a-z0-9+.\-]{0,30}://([^\s/?#@"'<>` + "`" + `:]*:([^\s/?#"'<>` + "`" + `]+))@`)
	smtpAuthRe = lazy(`(?i)\bAUTH[ \t]+(?:PLAIN|LOGIN|XOAUTH2|CRAM-MD5)[ \t]+([A-Za-z0-9+/=]{8,})`)
	authHdrRe  = lazy(`(?i)\b(?:proxy-)?authorization["']?[ \t]*[:=][ \t]*["']?[ \t]*(?:(?:bearer|basic|token|digest|negotiate|apikey|api-key|sso-key)[ \t]+)?([A-Za-z0-9\-._~+/=:%]{8,})`)
	bearerRe   = lazy(`(?i)\b(?:bearer|basic)[ \t]+([A-Za-z0-9\-._~+/]{8,}=*)`)
)

func findURICredentials(text string) []span {
	if !strings.Contains(text, "@") {
		return nil
	}
	var spans []span
	for _, m := range uriCredRe().FindAllStringSubmatchIndex(text, -1) {
		if plausibleSecret(text[m[4]:m[5]]) {
			spans = append(spans, span{start: m[2], end: m[3]})
		}
	}
	return spans
}

func findSMTPAuth(text string) []span {
	var spans []span
	for _, m := range smtpAuthRe().FindAllStringSubmatchIndex(text, -1) {
		spans = append(spans, span{start: m[2], end: m[3]})
	}
	return spans
}

func findBearerTokens(text string) []span {
	var spans []span
	for _, re := range []func() *regexp.Regexp{authHdrRe, bearerRe} {
		for _, m := range re().FindAllStringSubmatchIndex(text, -1) {
			// A sentence may end right after the word: "Basic authentication."
			v := strings.TrimRight(text[m[2]:m[3]], ".")
			if len(v) >= 8 && looksLikeToken(v) {
				spans = append(spans, span{start: m[2], end: m[2] + len(v)})
			}
		}
	}
	return spans
}

// looksLikeToken tells "Bearer eyJhbGciOi…" from "Bearer authentication": a
// token has a digit or token punctuation, or mixes cases.
func looksLikeToken(v string) bool {
	if strings.Count(v, v[:1]) == len(v) {
		return false // xxxxxxxx
	}
	var upper, lower int
	for _, r := range v {
		switch {
		case r >= '0' && r <= '9', strings.ContainsRune("-._~+/=:%", r):
			return true
		case unicode.IsUpper(r):
			upper++
		case unicode.IsLower(r):
			lower++
		}
	}
	return upper >= 2 && lower >= 2
}

// ---- email, internal-host, internal-ip ----

var emailRe = lazy(`(?i)\b[a-z0-9._%+\-]+@(?:[a-z0-9](?:[a-z0-9\-]{0,61}[a-z0-9])?\.)+[a-z]{2,24}\b`)

func findEmails(text string) []span {
	var spans []span
	for _, m := range emailRe().FindAllStringIndex(text, -1) {
		if inURIAuthority(text, m[0]) {
			continue // user:password@host is uri-credentials' and the host rule's
		}
		spans = append(spans, span{start: m[0], end: m[1]})
	}
	return spans
}

// inURIAuthority: offset i lies in a URI's authority (after "://", before
// any path, query or fragment) on the same token.
func inURIAuthority(text string, i int) bool {
	start := strings.LastIndexAny(text[:i], " \t\r\n\"'`<>(")
	tok := text[start+1 : i]
	j := strings.LastIndex(tok, "://")
	return j >= 0 && !strings.ContainsAny(tok[j+3:], "/?#")
}

var domainRe = lazy(`^[a-z0-9](?:[a-z0-9\-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9\-]{0,61}[a-z0-9])?)*$`)

// hostFinder matches host names equal to or under the suffixes; a
// single-label one ("internal") needs a label in front, or every use would go.
func hostFinder(suffixes []string) (func(string) []span, error) {
	var alts []string
	for _, s := range suffixes {
		s = strings.Trim(strings.ToLower(strings.TrimSpace(s)), ".")
		if !domainRe().MatchString(s) {
			return nil, fmt.Errorf("confidential domain %q is not a domain name", s)
		}
		labels := `(?:[a-z0-9](?:[a-z0-9\-]{0,61}[a-z0-9])?\.)*`
		if !strings.Contains(s, ".") {
			labels = `(?:[a-z0-9](?:[a-z0-9\-]{0,61}[a-z0-9])?\.)+`
		}
		alts = append(alts, labels+regexp.QuoteMeta(s))
	}
	re := regexp.MustCompile(`(?i)(?:` + strings.Join(alts, "|") + `)`)
	return func(text string) []span {
		var spans []span
		for _, m := range re.FindAllStringIndex(text, -1) {
			if m[0] > 0 && isHostChar(text[m[0]-1]) && text[m[0]-1] != '.' {
				continue // notcorp.example.com is not under corp.example.com
			}
			if m[1] < len(text) && (isHostChar(text[m[1]]) && text[m[1]] != '.' ||
				text[m[1]] == '.' && m[1]+1 < len(text) && isAlnum(text[m[1]+1])) {
				continue // corp.example.com.evil.io is not either
			}
			spans = append(spans, span{start: m[0], end: m[1]})
		}
		return spans
	}, nil
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func isHostChar(c byte) bool { return isAlnum(c) || c == '-' || c == '.' || c == '_' }

var (
	ipv4Re = lazy(`\b(?:[0-9]{1,3}\.){3}[0-9]{1,3}\b`)
	ipv6Re = lazy(`(?:[0-9A-Fa-f]{1,4}|:):[0-9A-Fa-f:.]*`)
)

// ipFinder matches IPv4 and IPv6 addresses inside the prefixes; a dotted
// quad inside a longer dotted number (a version 1.2.3.4.5) is not one.
func ipFinder(prefixes []netip.Prefix) func(string) []span {
	inside := func(s string) bool {
		a, err := netip.ParseAddr(s)
		if err != nil {
			return false
		}
		a = a.Unmap()
		return slices.ContainsFunc(prefixes, func(p netip.Prefix) bool { return p.Contains(a) })
	}
	return func(text string) []span {
		var spans []span
		for _, m := range ipv4Re().FindAllStringIndex(text, -1) {
			if m[0] > 0 && (text[m[0]-1] == '.' || isDigit(text[m[0]-1])) {
				continue
			}
			if m[1]+1 < len(text) && text[m[1]] == '.' && isDigit(text[m[1]+1]) {
				continue
			}
			if inside(text[m[0]:m[1]]) {
				spans = append(spans, span{start: m[0], end: m[1]})
			}
		}
		if !strings.Contains(text, ":") {
			return spans
		}
		for _, m := range ipv6Re().FindAllStringIndex(text, -1) {
			cand := strings.TrimRight(text[m[0]:m[1]], ".")
			if strings.Count(cand, ":") >= 2 && inside(cand) {
				spans = append(spans, span{start: m[0], end: m[0] + len(cand)})
			}
		}
		return spans
	}
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// ---- credential-assignment ----

// credentialKeyRe names keys that hold a token or key rather than a
// password: aws_secret_access_key, client_secret, api_key, auth_token, …
var credentialKeyRe = lazy(`(?i)(?:secret|token|api[_.\-]?key|access[_.\-]?key|private[_.\-]?key|credential|auth)s?[_.\-]?[0-9]*$`)

// findCredentialAssignments redacts random-looking values (bareSecret)
// assigned to credential-named keys: gitleaks' generic rule lets one through
// when it contains one of ~1,400 stopwords ("the", "aws", …).
func findCredentialAssignments(text string) []span {
	if !hasRun(text, minBare) {
		return nil // no value long enough to qualify: skip the regexp
	}
	var spans []span
	for _, m := range assignRe().FindAllStringSubmatchIndex(text, -1) {
		if !credentialKeyRe().MatchString(strings.Trim(text[m[2]:m[3]], `"'`)) {
			continue
		}
		for g := 6; g+1 < len(m); g += 2 {
			if m[g] >= 0 && bareSecret(text[m[g]:m[g+1]]) {
				spans = append(spans, span{start: m[g], end: m[g+1]})
			}
		}
	}
	return spans
}

// hasRun reports whether text holds n consecutive base64/base64url bytes.
func hasRun(text string, n int) bool {
	run := 0
	for i := 0; i < len(text); i++ {
		if bareClass[text[i]] {
			if run++; run >= n {
				return true
			}
		} else {
			run = 0
		}
	}
	return false
}
