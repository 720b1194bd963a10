// Package modeltext neutralises text a language model wrote before a
// reader sees it. A prompt injection in a changelist can steer what the model
// writes, so nothing it writes may become a live link, an image, HTML or an
// @mention: the only links a reader gets are the service's own.
//
// Text is judged as the reader's software reads the assembled body
// (docs/reference/swarm.md, "How P4 Code Review renders a comment, and reads its mentions"):
// Swarm's Linkify pass, then Parsedown 1.7.4 with raw HTML allowed, @mentions
// read from the raw body, code or not; mail clients autolink the text part.
// Line is a one-line field (title, file, rule); Markdown a message, its code
// blocks moved into fences the service writes (Code); Code a fence no line
// inside can close; Plain is for e-mail and the digest. All four drop
// invisible format characters, write every URL scheme and host inert
// ("https[:]//evil[.]example", "www[.]x") and every "@" as a full-width "＠"
// (U+FF20), which Swarm's callout pattern (a literal "@") never matches.
package modeltext

import (
	"regexp"
	"slices"
	"strings"
	"unicode"
)

// Plain neutralises model text for e-mail: format characters dropped, URLs
// and hosts inert, "@" full-width; the rest as written.
func Plain(s string) string { return inert(clean(s)) }

// Line neutralises a one-line field for a Markdown body: white space
// collapsed, then written as prose.
func Line(s string) string { return prose(strings.Join(strings.Fields(clean(s)), " ")) }

// Markdown neutralises a model's message for a Markdown body: its lines are
// prose (as Line's), and each fenced block the model wrote (``` or ~~~, to
// its closing line or the end) is written again in the service's own (Code).
func Markdown(s string) string {
	lines := strings.Split(clean(s), "\n")
	var out []string
	for i := 0; i < len(lines); i++ {
		marker := fenceOpener(lines[i])
		if marker == "" {
			out = append(out, prose(lines[i]))
			continue
		}
		var code []string
		for i++; i < len(lines) && !closes(lines[i], marker); i++ {
			code = append(code, lines[i])
		}
		out = append(out, "", Code(strings.Join(code, "\n")), "")
	}
	return strings.Trim(strings.Join(out, "\n"), "\n")
}

// fenceOpener returns the run of three or more ` or ~ a line opens a code
// block with, "" for none; lenient: whatever a renderer might take for a fence.
func fenceOpener(line string) string {
	t := strings.TrimLeft(line, " \t")
	if len(t) < 3 || (t[0] != '`' && t[0] != '~') {
		return ""
	}
	if n := len(t) - len(strings.TrimLeft(t, t[:1])); n >= 3 {
		return t[:n]
	}
	return ""
}

func closes(line, marker string) bool {
	t := strings.TrimSpace(line)
	return len(t) >= len(marker) && strings.Trim(t, marker[:1]) == ""
}

// Code writes s as a fenced code block of the service's own, fence lines
// included. The marker is the character, ~ or `, of which no line of s
// consists (Parsedown 1.7.4 closes a fence on any line of three or more of
// it), longer than any run of it in s (CommonMark closes on one as long);
// when both have such a line, s is indented code instead. "@" and URLs are
// inert inside too: Swarm reads mentions from the raw body, code or not.
func Code(s string) string {
	s = inertCode(clean(s))
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for _, c := range []byte{'~', '`'} {
		if closerIn(lines, c) {
			continue
		}
		fence := strings.Repeat(string(c), max(3, longestRun(s, c)+1))
		return fence + "\n" + strings.Join(lines, "\n") + "\n" + fence
	}
	for i, l := range lines {
		lines[i] = "    " + l
	}
	return strings.Join(lines, "\n")
}

// closerIn: a line is c three or more times, with white space (Parsedown's closer).
func closerIn(lines []string, c byte) bool {
	return slices.ContainsFunc(lines, func(l string) bool {
		t := strings.TrimSpace(l)
		return len(t) >= 3 && strings.Trim(t, string(c)) == ""
	})
}

func longestRun(s string, c byte) int {
	best, n := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			n++
			best = max(best, n)
		} else {
			n = 0
		}
	}
	return best
}

// clean drops format characters (zero-width, bidi, soft hyphen, BOM), so
// "ht\u200btps://" is matched as the URL a renderer shows; line ends become
// "\n" (Parsedown reads a lone CR as one), other controls but tab spaces.
func clean(s string) string {
	s = strings.NewReplacer("\r\n", "\n", "\r", "\n").Replace(s)
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\t':
			return r
		case unicode.Is(unicode.Cf, r):
			return -1
		case unicode.IsControl(r):
			return ' '
		}
		return r
	}, s)
}

// scheme matches a URL scheme and its colon, with no word boundary before
// it (Linkify strips the "_" of "_https://x_"): any scheme before "//", and
// the schemes that act without one.
var scheme = regexp.MustCompile(`(?i)[a-z][a-z0-9+.-]*://|(?:javascript|vbscript|data|mailto|file|tel|sms|blob|about):`)

// www matches a "www." host start, which GFM's autolink extension links.
var www = regexp.MustCompile(`(?i)www\.`)

// dotted matches a run that may be a host name: labels joined by dots.
var dotted = regexp.MustCompile(`(?i)[a-z0-9_-]+(?:\.[a-z0-9_-]+)+`)

// tlds are the top-level domains a bare host is recognised by, as mail
// clients link "evil.com". Left out on purpose, so "main.py" and "user.name"
// stay readable: file extensions and member names (rs, py, sh, md, pl, pm,
// mk, ml, cc, so, ps, in, id, name, info, app, top, store, local, test,
// page, link, click); such a host is still defanged after a scheme or before a path.
var tlds = map[string]bool{}

func init() {
	for _, t := range strings.Fields(`com net org edu gov mil biz pro io dev xyz online site website shop tech
		cloud news blog zip mov example invalid localhost onion co me ai ly to gg tk ga cf gq su ru cn uk de
		fr jp us eu ca au br nl it es ch se no be at dk fi cz kr tw hk sg nz za mx ar ir tr ua vn th pk ng ke
		il gr pt ro hu bg sk si hr lt lv ee ie lu li ws tv fm cx ph my by kz ve cl pe uy`) {
		tlds[t] = true
	}
}

// linkifyWord matches what Swarm's Linkify links to its pages: "change 12",
// "changelist 12", "review 12", "job 12" and the job id "job123456".
var linkifyWord = regexp.MustCompile(`(?i)(change(?:list)?|review|job)([ \t]+)([0-9])|(job)([0-9]{6})`)

// inert writes every URL, host and mention of s so nothing links it (see
// the package comment), and Swarm's "change 12" with a no-break space, one
// word to its Linkify.
func inert(s string) string {
	s = inertCode(s)
	return linkifyWord.ReplaceAllStringFunc(s, func(m string) string {
		sub := linkifyWord.FindStringSubmatch(m)
		if sub[1] != "" {
			return sub[1] + "\u00a0" + sub[3]
		}
		return sub[4] + "\u00a0" + sub[5]
	})
}

// inertCode is inert without the "change 12" rewording: in a fence Linkify's
// link is text, and code keeps its spaces.
func inertCode(s string) string {
	s = scheme.ReplaceAllStringFunc(s, func(m string) string {
		i := strings.IndexByte(m, ':')
		return m[:i] + "[:]" + m[i+1:]
	})
	s = www.ReplaceAllStringFunc(s, func(m string) string { return m[:3] + "[.]" })
	s = defangHosts(s)
	return strings.ReplaceAll(s, "@", "＠")
}

// defangHosts writes as "[.]" the dots of every run a linker could take for
// a host: after "//", before a "/", with a known TLD, or an IPv4 address.
func defangHosts(s string) string {
	idx := dotted.FindAllStringIndex(s, -1)
	if idx == nil {
		return s
	}
	var b strings.Builder
	last := 0
	for _, m := range idx {
		run := s[m[0]:m[1]]
		if hostLike(s, m[0], m[1], run) {
			b.WriteString(s[last:m[0]])
			b.WriteString(strings.ReplaceAll(run, ".", "[.]"))
			last = m[1]
		}
	}
	b.WriteString(s[last:])
	return b.String()
}

func hostLike(s string, from, to int, run string) bool {
	labels := strings.Split(run, ".")
	tld := strings.ToLower(labels[len(labels)-1])
	if strings.HasSuffix(s[:from], "//") || tlds[tld] || ipv4(labels) {
		return true
	}
	// Before a path ("evil.py/login") it is a link to a linker that knows the TLD.
	return to < len(s) && s[to] == '/' && !allDigits(tld)
}

func ipv4(labels []string) bool {
	return len(labels) == 4 && !slices.ContainsFunc(labels, func(l string) bool { return l == "" || !allDigits(l) })
}

func allDigits(s string) bool {
	return strings.Trim(s, "0123456789") == ""
}

// mdEscaper escapes what Markdown would turn into links, images, code, HTML
// or reference definitions: "\", "`", "[", "]" and "!" by backslash (both
// renderers take it, Linkify leaves it); "<" as the full-width "＜"
// (U+FF1C): Parsedown has no escape for it, and Linkify would show an
// entity as "&lt;".
var mdEscaper = strings.NewReplacer(`\`, `\\`, "`", "\\`", `[`, `\[`, `]`, `\]`, `!`, `\!`, `<`, "＜")

// tildes matches a fence marker of three or more tildes.
var tildes = regexp.MustCompile(`~~~+`)

// prose neutralises one line outside code: inert, Markdown's active
// characters escaped, a tilde run's first escaped so it is no fence.
func prose(s string) string {
	s = mdEscaper.Replace(inert(s))
	return tildes.ReplaceAllStringFunc(s, func(m string) string { return `\` + m })
}
