package modeltext

import (
	"strings"
	"testing"

	"github.com/criticizer/criticizer/internal/rendercheck"
)

func TestLine(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"a link", "see [docs](https://evil.example/x)", `see \[docs\](https\[:\]//evil\[.\]example/x)`},
		{"an image", "![x](http://evil.example/p.png)", `\!\[x\](http\[:\]//evil\[.\]example/p.png)`},
		{"HTML", `<img src=x onerror=alert(1)>`, `＜img src=x onerror=alert(1)>`},
		{"an entity stays as written", "&lt;b&gt;", "&lt;b&gt;"},
		{"mentions and an address", "ping @alice or @*leads, mail bob@example.com", `ping ＠alice or ＠*leads, mail bob＠example\[.\]com`},
		{"a URL in emphasis", "_https://evil.example/u_", `_https\[:\]//evil\[.\]example/u_`},
		{"bare hosts", "*www.evil.com* evil.example/path main.py", `*www\[.\]evil\[.\]com* evil\[.\]example/path main.py`},
		{"javascript", "javascript:alert(1)", `javascript\[:\]alert(1)`},
		{"a fence opener mid-line", "```<img src=x>", "\\`\\`\\`＜img src=x>"},
		{"tildes", "~~~ x", `\~~~ x`},
		{"zero-width inside a scheme", "h\u200bttps://e\u200bvil.example", `https\[:\]//evil\[.\]example`},
		{"Swarm's change links", "change 12 and job123456", "change\u00a012 and job\u00a0123456"},
		{"white space collapsed", "a\n\tb", "a b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Line(tt.in); got != tt.want {
				t.Errorf("Line(%q)\n = %q\nwant %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestMarkdownRefencesTheModelsCode(t *testing.T) {
	got := Markdown("fix:\n```c\nif (a[i] < n) @x\n```\nthen [x](y)")
	want := "fix:\n\n~~~\nif (a[i] < n) ＠x\n~~~\n\nthen \\[x\\](y)"
	if got != want {
		t.Errorf("Markdown = %q\nwant %q", got, want)
	}
	if got := Markdown("```\ncode [x](y)"); got != "~~~\ncode [x](y)\n~~~" {
		t.Errorf("an unclosed fence: %q", got)
	}
}

func TestCodeFenceCannotBeClosedFromInside(t *testing.T) {
	tests := []struct{ in, want string }{
		{"strlcpy(d, s, n);", "~~~\nstrlcpy(d, s, n);\n~~~"},
		{"a ~~~~~ b", "~~~~~~\na ~~~~~ b\n~~~~~~"},
		{"x\n  ~~~\ny", "```\nx\n  ~~~\ny\n```"},
		{"x\n~~~\n```` y\n\t```", "    x\n    ~~~\n    ```` y\n    \t```"},
		{"mail @alice at https://evil.example", "~~~\nmail ＠alice at https[:]//evil[.]example\n~~~"},
	}
	for _, tt := range tests {
		if got := Code(tt.in); got != tt.want {
			t.Errorf("Code(%q)\n = %q\nwant %q", tt.in, got, tt.want)
		}
	}
}

func TestPlain(t *testing.T) {
	for in, want := range map[string]string{
		"go to https://evil.example/login now":     "go to https[:]//evil[.]example/login now",
		"HTTP://EVIL.example and www.evil.example": "HTTP[:]//EVIL[.]example and www[.]evil[.]example",
		"mailto:x@evil.example":                    "mailto[:]x＠evil[.]example",
		"_https://evil.example/u_ evil.com":        "_https[:]//evil[.]example/u_ evil[.]com",
		"strcpy(dst, src) is unbounded":            "strcpy(dst, src) is unbounded",
		"user.name in main.py":                     "user.name in main.py",
	} {
		if got := Plain(in); got != want {
			t.Errorf("Plain(%q) = %q, want %q", in, got, want)
		}
	}
}

// Every hostile fragment, in every place a body puts model text, renders
// with nothing live through Parsedown (behind Swarm's Linkify pass) and
// goldmark, and holds no mention Swarm would read; the e-mail's form of it
// holds nothing a mail client links.
func TestHostileFragmentsRenderInert(t *testing.T) {
	var bodies []string
	for _, h := range rendercheck.Hostile {
		bodies = append(bodies, "**HIGH** · "+Line(h)+" · "+Line(h)+"\n\n"+Markdown(h)+"\n\n**Suggestion:**\n\n"+Code(h)+"\n\n- "+Line(h)+" ("+Line(h)+":12)")
	}
	probs, err := rendercheck.SwarmComments(bodies)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range probs {
		if len(p) > 0 {
			t.Errorf("%q as a comment:\n%s\n%s", rendercheck.Hostile[i], bodies[i], strings.Join(p, "\n"))
		}
		if p := rendercheck.MailText(Plain(rendercheck.Hostile[i])); len(p) > 0 {
			t.Errorf("%q in an e-mail: %s", rendercheck.Hostile[i], strings.Join(p, "; "))
		}
	}
}
