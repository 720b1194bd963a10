package main

import (
	"strings"
	"testing"
	"time"

	"github.com/criticizer/criticizer/shared/delivery"
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/letter"
	"github.com/criticizer/criticizer/shared/notify"
)

// TestDecodeMail: the demo prints the text part decoded, not raw
// quoted-printable MIME, and finds the HTML part.
func TestDecodeMail(t *testing.T) {
	m, err := notify.Compose(delivery.Key{Changelist: 7, Recipient: "a@example.com", ReviewVersion: 1}, letter.Content{
		Review: domain.ReviewResult{SchemaVersion: "1.0", PromptVersion: "1.0.0", Summary: "Größe = " + strings.Repeat("long line ", 20),
			Findings: []domain.Finding{{ID: "F-1", Severity: "high", Category: "security", Title: "x=1", File: "//d/a.c", Line: 1, Message: "m"}}},
	}, notify.Envelope{From: "Criticizer <c@example.com>", HTML: true, Date: time.Unix(0, 0)})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := m.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	parts, err := decodeMail(raw)
	if err != nil {
		t.Fatal(err)
	}
	crlf := func(s string) string { return strings.ReplaceAll(s, "\r\n", "\n") }
	if crlf(parts.text) != m.Text || crlf(parts.html) != m.HTML {
		t.Errorf("decoded parts differ from the composed ones:\n%q\n%q", parts.text, m.Text)
	}
	if strings.Contains(parts.text, "=3D") || !strings.Contains(parts.text, "Größe") {
		t.Errorf("text part not decoded: %q", parts.text)
	}
}
