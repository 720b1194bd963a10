package modeltext

import "testing"

func TestMarkdown(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"a link", "see [docs](https://evil.example/x)", `see \[docs\](https[:]//evil.example/x)`},
		{"an image", "![x](http://evil.example/p.png)", `\!\[x\](http[:]//evil.example/p.png)`},
		{"HTML", `<a href="https://evil.example">click</a>`, `&lt;a href="https[:]//evil.example"&gt;click&lt;/a&gt;`},
		{"an entity-encoded tag", "&lt;img src=x&gt;", "&amp;lt;img src=x&amp;gt;"},
		{"a mention and an address", "ping @alice or @*leads, mail bob@example.com", "ping ＠alice or ＠*leads, mail bob＠example.com"},
		{"an autolink", "<https://evil.example> or www.evil.example", "&lt;https[:]//evil.example&gt; or www[.]evil.example"},
		{"javascript", "javascript:alert(1)", "javascript[:]alert(1)"},
		{"a code span stays code", "use `strncpy(d, s, n)` not `a[i]`", "use `strncpy(d, s, n)` not `a[i]`"},
		{"a lone backtick", "it`s [x](y)", "it\\`s \\[x\\](y)"},
		{"a fenced block stays code", "fix:\n```c\nif (a[i] < n) @x\n```\nthen [x](y)", "fix:\n```c\nif (a[i] < n) @x\n```\nthen \\[x\\](y)"},
		{"an unclosed fence is closed", "```\ncode [x](y)", "```\ncode [x](y)\n```"},
		{"a reference definition", "[ref]: https://evil.example", `\[ref\]: https[:]//evil.example`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Markdown(tt.in); got != tt.want {
				t.Errorf("Markdown(%q)\n = %q\nwant %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestPlain(t *testing.T) {
	for in, want := range map[string]string{
		"go to https://evil.example/login now":     "go to https[:]//evil.example/login now",
		"HTTP://EVIL.example and www.evil.example": "HTTP[:]//EVIL.example and www[.]evil.example",
		"mailto:x@evil.example":                    "mailto[:]x@evil.example",
		"strcpy(dst, src) is unbounded":            "strcpy(dst, src) is unbounded",
	} {
		if got := Plain(in); got != want {
			t.Errorf("Plain(%q) = %q, want %q", in, got, want)
		}
	}
}
