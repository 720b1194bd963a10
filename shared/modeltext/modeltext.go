// Package modeltext neutralises text a language model wrote before a
// reader sees it. A prompt injection inside a changelist can steer what the
// model writes, so nothing it writes may become a live link, an image,
// HTML or an @mention: the only links a reader gets are the ones the
// service makes (the job page, the Swarm review).
//
// Markdown is for bodies P4 Code Review renders (review comments): code
// spans and fenced blocks stay code, verbatim; elsewhere link and image
// syntax is escaped, HTML is written as text, URLs are written inert and
// @mentions lose their "@". Plain is for e-mail, text and HTML parts alike
// (the HTML renderer escapes after it), the model's text and the code
// excerpts (a changelist can carry the injection) alike: every URL is
// written inert, so a mail client's auto-linking finds none.
package modeltext

import (
	"regexp"
	"strings"
)

// scheme matches the start of a URL a renderer or mail client would link:
// a scheme and its colon (and slashes), or a bare www. host.
var scheme = regexp.MustCompile(`(?i)\b(https?|ftps?|file|mailto|javascript|data|vbscript|sftp|ssh|git|svn):(//)?|\bwww\.`)

// inert writes every URL so that nothing links it: "https://x" becomes
// "https[:]//x", "www.x" becomes "www[.]x". The text stays readable.
func inert(s string) string {
	return scheme.ReplaceAllStringFunc(s, func(m string) string {
		if strings.EqualFold(m, "www.") {
			return m[:3] + "[.]"
		}
		i := strings.IndexByte(m, ':')
		return m[:i] + "[:]" + m[i+1:]
	})
}

// Plain neutralises model text for e-mail: URLs inert, the rest as written.
func Plain(s string) string { return inert(s) }

// mention matches an @ that Swarm would take for a user or group mention
// (@user, @*group) or an address's @.
var mention = regexp.MustCompile(`@([\p{L}\p{N}_*.-])`)

// mdEscaper escapes outside code what Markdown (GFM and Parsedown alike)
// would turn into links, images or HTML: brackets and "!" by backslash,
// "<" and "&" as entities (Parsedown has no backslash escape for "<").
var mdEscaper = strings.NewReplacer(`\`, `\\`, `[`, `\[`, `]`, `\]`, `!`, `\!`, `<`, `&lt;`, `>`, `&gt;`, `&`, `&amp;`)

// Markdown neutralises model text for a Markdown body: code fences and
// code spans are kept verbatim (code stays code); everything else has its
// link, image and HTML syntax escaped, its URLs inert and its @mentions
// written with a full-width "＠". An unclosed fence is closed, so nothing
// after the text (the service's own lines) falls inside it.
func Markdown(s string) string {
	var b strings.Builder
	fence := ""
	for i, line := range strings.Split(s, "\n") {
		if i > 0 {
			b.WriteByte('\n')
		}
		if fence != "" {
			b.WriteString(line)
			if closesFence(line, fence) {
				fence = ""
			}
			continue
		}
		if f := opensFence(line); f != "" {
			fence = f
			b.WriteString(line)
			continue
		}
		b.WriteString(markdownLine(line))
	}
	if fence != "" {
		b.WriteString("\n" + fence)
	}
	return b.String()
}

// opensFence returns the fence a line opens (``` or ~~~, three or more,
// indented at most three spaces), "" when it opens none.
func opensFence(line string) string {
	t := strings.TrimLeft(line, " ")
	if len(line)-len(t) > 3 || len(t) < 3 || (t[0] != '`' && t[0] != '~') {
		return ""
	}
	n := len(t) - len(strings.TrimLeft(t, t[:1]))
	if n < 3 || (t[0] == '`' && strings.Contains(t[n:], "`")) {
		return ""
	}
	return t[:n]
}

func closesFence(line, fence string) bool {
	t := strings.TrimSpace(line)
	return len(t) >= len(fence) && strings.Trim(t, fence[:1]) == ""
}

// markdownLine escapes one line outside fences, keeping its code spans (a
// run of backticks up to the next run of the same length) verbatim; a
// backtick without its match is escaped.
func markdownLine(line string) string {
	var b strings.Builder
	for len(line) > 0 {
		i := strings.IndexByte(line, '`')
		if i < 0 {
			b.WriteString(prose(line))
			break
		}
		b.WriteString(prose(line[:i]))
		rest := line[i:]
		n := len(rest) - len(strings.TrimLeft(rest, "`"))
		tick := rest[:n]
		end := closingTicks(rest[n:], n)
		if end < 0 {
			b.WriteString(strings.Repeat("\\`", n))
			line = rest[n:]
			continue
		}
		b.WriteString(tick + rest[n:n+end] + tick)
		line = rest[n+end+n:]
	}
	return b.String()
}

// closingTicks finds a run of exactly n backticks in s, -1 when none.
func closingTicks(s string, n int) int {
	for i := 0; i < len(s); {
		j := strings.IndexByte(s[i:], '`')
		if j < 0 {
			return -1
		}
		j += i
		k := j
		for k < len(s) && s[k] == '`' {
			k++
		}
		if k-j == n {
			return j
		}
		i = k
	}
	return -1
}

func prose(s string) string {
	return mention.ReplaceAllString(inert(mdEscaper.Replace(s)), "＠$1")
}
