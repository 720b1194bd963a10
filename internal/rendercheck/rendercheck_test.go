package rendercheck

import (
	"strings"
	"testing"
)

// The checks can fail: each body here carries something live as its
// renderer shows it (among them the bodies issue 37 found posted), and
// each must be reported; the plain ones must not.
func TestChecksFindWhatIsLive(t *testing.T) {
	const job = "https://criticizer.example/jobs/j-1?t=x"
	live := []struct{ name, body, want string }{
		{"a title opening a fence mid-line", "**HIGH** · security · ```<img src=x onerror=alert(1)>", "element <img>"},
		{"a URL in emphasis (no word boundary)", "**LOW** · x · _https://evil.example/u_", `href="https://evil.example/u"`},
		{"a link", `\[ok\] [log in](https://evil.example/login)`, `href="https://evil.example/login"`},
		{"a mention in a fence", "x\n\n```\n@*mallory\n```", `"@*mallory" as a mention`},
		{"a group mention", "cc @@*leads.", `"@*leads" as a mention`},
		{"a fence closed early by Parsedown", "````\n```\n<img src=x onerror=1>\n````", "Parsedown: element <img>"},
		{"an address", "mail bob@evil.example", `mailto:bob@evil.example`},
		{"Swarm's own links", "see change 12", `href="/@12"`},
		{"another job page", "[The review's job page](https://criticizer.example/jobs/j-2)", `href="https://criticizer.example/jobs/j-2"`},
	}
	var bodies []string
	for _, c := range live {
		bodies = append(bodies, c.body)
	}
	plain := []string{"**HIGH** · security · Unbounded strcpy\n\nstrcpy copies without a bound.", "[The review's job page](" + job + ")",
		"~~~\nif (a < b) { return ＠x; }\n~~~", `\[x\](https\[:\]//evil\[.\]example) ＠alice`}
	probs, err := SwarmComments(append(bodies, plain...), job)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range live {
		if got := strings.Join(probs[i], "\n"); !strings.Contains(got, c.want) {
			t.Errorf("%s: %q\nreported %q, want it to name %s", c.name, c.body, got, c.want)
		}
	}
	for i, b := range plain {
		if p := probs[len(live)+i]; len(p) > 0 {
			t.Errorf("%q reported %q: nothing in it is live", b, p)
		}
	}
}

func TestCallouts(t *testing.T) {
	got := Callouts("cc @alice, (@*bob) \"@@leads\" @@*ops. @@!one x@y `@*code` **@emph** ＠wide @\u00a0no @first.last! @*a-b")
	want := []string{"@alice", "@leads", "@first.last", "@*bob", "@*ops", "@*a-b", "@@!one"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("Callouts = %q, want %q", got, want)
	}
}

func TestMailParts(t *testing.T) {
	const review = "https://swarm.example/reviews/885"
	if p := MailText("Review: "+review+"\n\nnothing here: evil[.]example https[:]//x ＠a", review); len(p) > 0 {
		t.Errorf("plain text reported: %q", p)
	}
	for _, text := range []string{"go to _https://evil.example/u_", "www.evil.com", "evil.com/login", "bob@evil.example"} {
		if p := MailText(text, review); len(p) == 0 {
			t.Errorf("MailText(%q) found nothing a mail client links", text)
		}
	}
	if p := MailHTML(`<p><a href="`+review+`">review</a> evil[.]example</p>`, review); len(p) > 0 {
		t.Errorf("plain HTML reported: %q", p)
	}
	for _, h := range []string{`<a href="https://evil.example">x</a>`, `<img src="x">`, `<p onclick="x()">y</p>`, `<p>see www.evil.com</p>`, `<div style="background:url(https://evil.example/b)">x</div>`} {
		if p := MailHTML(h, review); len(p) == 0 {
			t.Errorf("MailHTML(%q) found nothing live", h)
		}
	}
}
