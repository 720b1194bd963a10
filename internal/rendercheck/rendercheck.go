// Package rendercheck judges what the service posts as its readers'
// software renders it (the design brief's principle "Judge text by its renderer"): a Swarm
// comment body through P4 Code Review's Linkify pass and Parsedown 1.7.4
// (Debian's php-parsedown, the release Swarm 2022.1 bundles; installed by
// install.sh when missing) and through goldmark (CommonMark, GFM, linkify),
// its raw text as Swarm reads @mentions; an e-mail's HTML part by its
// elements and attributes, its text part through a GFM autolinker. Each check
// returns the problems found: the one assertion the unit tests, the fuzz
// target and the integration suite share.
package rendercheck

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/criticizer/criticizer/internal/standin/swarm"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	gmhtml "github.com/yuin/goldmark/renderer/html"
	"github.com/yuin/goldmark/util"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

var (
	//go:embed swarmrender.php
	swarmRender []byte
	//go:embed install.sh
	installScript []byte
)

// prepare installs php-cli and php-parsedown when missing and writes the
// renderer to a temporary directory, once.
var prepare = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "rendercheck-")
	if err != nil {
		return "", err
	}
	for name, b := range map[string][]byte{"swarmrender.php": swarmRender, "install.sh": installScript} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o755); err != nil {
			return "", err
		}
	}
	cmd := exec.Command("bash", filepath.Join(dir, "install.sh"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("rendercheck: Parsedown 1.7.4 (php-cli, php-parsedown) is not available and could not be installed: %w\n%s", err, stderr.String())
	}
	return dir, nil
})

// SwarmHTML renders bodies as P4 Code Review shows a comment: its Linkify
// pass, then Parsedown 1.7.4 with line breaks on (swarmrender.php).
func SwarmHTML(bodies ...string) ([]string, error) {
	dir, err := prepare()
	if err != nil {
		return nil, err
	}
	in, err := json.Marshal(bodies)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("php", filepath.Join(dir, "swarmrender.php"))
	cmd.Stdin = bytes.NewReader(in)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("rendercheck: swarmrender.php: %w: %s", err, stderr.String())
	}
	var out []string
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil || len(out) != len(bodies) {
		return nil, fmt.Errorf("rendercheck: swarmrender.php answered %d of %d bodies (%v): %.200s", len(out), len(bodies), err, stdout.String())
	}
	return out, nil
}

// SwarmComments checks each body as Swarm renders it (SwarmHTML), reads its
// mentions (Callouts) and as goldmark renders it (Markdown), per body.
func SwarmComments(bodies []string, allowed ...string) ([][]string, error) {
	rendered, err := SwarmHTML(bodies...)
	if err != nil {
		return nil, err
	}
	out := make([][]string, len(bodies))
	for i, h := range rendered {
		for _, p := range RenderedMarkdown(h, allowed...) {
			out[i] = append(out[i], "Parsedown: "+p)
		}
		out[i] = append(out[i], Markdown(bodies[i], allowed...)...)
	}
	return out, nil
}

var markdown = goldmark.New(goldmark.WithExtensions(extension.GFM), goldmark.WithRendererOptions(gmhtml.WithUnsafe()))

// Markdown checks a body as goldmark (CommonMark, GFM, linkify, raw HTML
// passed) renders it, and its raw text as Swarm reads mentions.
func Markdown(body string, allowed ...string) []string {
	var b bytes.Buffer
	if err := markdown.Convert([]byte(body), &b); err != nil {
		return []string{"goldmark: " + err.Error()}
	}
	var out []string
	for _, p := range RenderedMarkdown(b.String(), allowed...) {
		out = append(out, "goldmark: "+p)
	}
	for _, c := range Callouts(body) {
		out = append(out, fmt.Sprintf("Swarm reads %q as a mention", c))
	}
	return out
}

// markdownElements are what Markdown makes of text; others are raw HTML that got through.
var markdownElements = map[atom.Atom]bool{atom.P: true, atom.Br: true, atom.Strong: true, atom.Em: true, atom.Code: true, atom.Pre: true,
	atom.Ul: true, atom.Ol: true, atom.Li: true, atom.Blockquote: true, atom.H1: true, atom.H2: true, atom.H3: true, atom.H4: true,
	atom.H5: true, atom.H6: true, atom.Hr: true, atom.Del: true, atom.Table: true, atom.Thead: true, atom.Tbody: true, atom.Tr: true,
	atom.Th: true, atom.Td: true, atom.A: true}

// RenderedMarkdown checks a Markdown renderer's HTML: Markdown's elements
// only, links only to allowed URLs, no attribute but a code block's class,
// a cell's alignment or an allowed href.
func RenderedMarkdown(h string, allowed ...string) []string {
	var out []string
	walk(h, func(n *html.Node) {
		if !markdownElements[n.DataAtom] {
			out = append(out, fmt.Sprintf("element <%s> (%s)", n.Data, render(n)))
			return
		}
		for _, a := range n.Attr {
			switch {
			case a.Key == "href" && n.DataAtom == atom.A && allowedURL(a.Val, allowed):
			case a.Key == "class" && n.DataAtom == atom.Code, a.Key == "align" || a.Key == "style" && strings.HasPrefix(a.Val, "text-align:"):
			default:
				out = append(out, fmt.Sprintf("attribute %s=%q on <%s>", a.Key, a.Val, n.Data))
			}
		}
		if n.DataAtom == atom.A && attr(n, "href") == "" {
			out = append(out, fmt.Sprintf("link without an allowed href (%s)", render(n)))
		}
	}, nil)
	return out
}

// inertMailElements may not appear in a mail's HTML part at all.
var inertMailElements = map[atom.Atom]bool{atom.Img: true, atom.Script: true, atom.Iframe: true, atom.Object: true, atom.Embed: true,
	atom.Form: true, atom.Svg: true, atom.Math: true, atom.Video: true, atom.Audio: true, atom.Link: true, atom.Base: true,
	atom.Input: true, atom.Button: true, atom.Frame: true, atom.Source: true, atom.Picture: true}

// urlAttrs are the attributes that load or link a URL.
var urlAttrs = map[string]bool{"href": true, "src": true, "srcset": true, "action": true, "formaction": true, "background": true,
	"poster": true, "xlink:href": true, "data": true, "cite": true, "longdesc": true, "ping": true}

// MailHTML checks an e-mail's HTML part: no image, script, frame or form,
// URL attribute but an allowed link, event handler or url() in a style;
// and its text as an autolinking mail client reads it (MailText).
func MailHTML(h string, allowed ...string) []string {
	var out []string
	var text strings.Builder
	walk(h, func(n *html.Node) {
		if inertMailElements[n.DataAtom] {
			out = append(out, fmt.Sprintf("element <%s>", n.Data))
		}
		for _, a := range n.Attr {
			k := strings.ToLower(a.Key)
			switch {
			case urlAttrs[k] && !(k == "href" && allowedURL(a.Val, allowed)):
				out = append(out, fmt.Sprintf("attribute %s=%q on <%s>", a.Key, a.Val, n.Data))
			case strings.HasPrefix(k, "on"):
				out = append(out, fmt.Sprintf("event handler %s on <%s>", a.Key, n.Data))
			case k == "http-equiv":
				out = append(out, fmt.Sprintf("<%s http-equiv=%q>", n.Data, a.Val))
			case k == "style" && strings.Contains(strings.ToLower(a.Val), "url("):
				out = append(out, fmt.Sprintf("style with url() on <%s>", n.Data))
			}
		}
	}, func(s string) { text.WriteString(s + "\n") })
	for _, p := range MailText(text.String(), allowed...) {
		out = append(out, "its text: "+p)
	}
	return out
}

// bareHost is a host with a TLD mail clients' linkers link without a scheme.
var bareHost = regexp.MustCompile(`(?i)(?:^|[^a-z0-9.-])((?:[a-z0-9-]+\.)+(?:com|net|org|io|dev|co|me|ai|ru|cn|uk|de|xyz|example|zip))(?:[^a-z0-9-]|$)`)

// autolinker is goldmark reduced to what a mail client does to a text
// part: paragraphs, <scheme:…> autolinks and GFM's linkify.
var autolinker = goldmark.New(
	goldmark.WithParser(parser.NewParser(
		parser.WithBlockParsers(util.Prioritized(parser.NewParagraphParser(), 1000)),
		parser.WithInlineParsers(util.Prioritized(parser.NewAutoLinkParser(), 100)))),
	goldmark.WithExtensions(extension.Linkify))

// MailText checks an e-mail's text part: no autolink but an allowed URL,
// no bare host with a common TLD.
func MailText(text string, allowed ...string) []string {
	var b bytes.Buffer
	if err := autolinker.Convert([]byte(text), &b); err != nil {
		return []string{"goldmark: " + err.Error()}
	}
	var out []string
	walk(b.String(), func(n *html.Node) {
		if n.DataAtom == atom.A && !allowedURL(attr(n, "href"), allowed) {
			out = append(out, fmt.Sprintf("autolinked %q", attr(n, "href")))
		}
	}, nil)
	for _, m := range bareHost.FindAllStringSubmatch(text, -1) {
		if !allowedHost(m[1], allowed) {
			out = append(out, fmt.Sprintf("bare host %q", m[1]))
		}
	}
	return out
}

// Callouts are the mentions Swarm's getCallouts reads in a raw body, code or
// not ("@name", "@*name" a required reviewer, "@@!name" a required group),
// as the Swarm stand-in reads them (swarm.GetCallouts).
func Callouts(raw string) []string {
	c := swarm.GetCallouts(raw)
	var out []string
	for i, names := range [][]string{c.Plain, c.Starred, c.RequireOne} {
		for _, n := range names {
			out = append(out, []string{"@", "@*", "@@!"}[i]+n)
		}
	}
	return out
}

func walk(h string, element func(*html.Node), text func(string)) {
	ctx := &html.Node{Type: html.ElementNode, Data: "div", DataAtom: atom.Div}
	nodes, err := html.ParseFragment(strings.NewReader(h), ctx)
	if err != nil {
		element(&html.Node{Type: html.ElementNode, Data: "unparsable"})
		return
	}
	for _, n := range nodes {
		ctx.AppendChild(n)
	}
	for n := range ctx.Descendants() {
		switch n.Type {
		case html.ElementNode:
			element(n)
		case html.TextNode:
			if text != nil {
				text(n.Data)
			}
		}
	}
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func render(n *html.Node) string {
	var b bytes.Buffer
	_ = html.Render(&b, n)
	return b.String()
}

func allowedURL(u string, allowed []string) bool { return u != "" && slices.Contains(allowed, u) }

// allowedHost: a bare host that is an allowed URL's own.
func allowedHost(host string, allowed []string) bool {
	return slices.ContainsFunc(allowed, func(a string) bool { return strings.Contains(a, "//"+host) })
}
