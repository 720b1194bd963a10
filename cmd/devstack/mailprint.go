package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	gomail "github.com/wneessen/go-mail"

	"github.com/criticizer/criticizer/internal/devstack"
)

// mailParts are an e-mail's decoded text and HTML bodies.
type mailParts struct{ text, html string }

// decodeMail reads a MIME message as a mail client would (go-mail's EML
// parser): multipart alternatives split, quoted-printable and base64 decoded.
func decodeMail(raw []byte) (mailParts, error) {
	var out mailParts
	msg, err := gomail.EMLToMsgFromReader(bytes.NewReader(raw))
	if err != nil {
		return out, err
	}
	for _, p := range msg.GetParts() {
		b, err := p.GetContent()
		if err != nil {
			return out, err
		}
		switch p.GetContentType() {
		case gomail.TypeTextPlain:
			out.text = string(b)
		case gomail.TypeTextHTML:
			out.html = string(b)
		}
	}
	return out, nil
}

// printMail prints the decoded text part of an e-mail and writes the message
// as .eml and its HTML part as .html under .run/, printing their paths so a
// person can open them.
func printMail(jobID string, i, n int, from string, to []string, raw []byte) error {
	fmt.Printf("\n===== e-mail %d of %d: %s -> %s =====\n", i+1, n, from, strings.Join(to, ", "))
	parts, err := decodeMail(raw)
	if err != nil {
		return fmt.Errorf("e-mail %d does not parse: %w", i+1, err)
	}
	fmt.Print(strings.ReplaceAll(parts.text, "\r\n", "\n"))
	if !strings.HasSuffix(parts.text, "\n") {
		fmt.Println()
	}
	dir, err := devstack.RunDir()
	if err != nil {
		return err
	}
	base := filepath.Join(dir, fmt.Sprintf("mail-%s-%d", jobID, i+1))
	if err := os.WriteFile(base+".eml", raw, 0o600); err != nil {
		return err
	}
	fmt.Printf("----- saved %s.eml", base)
	if parts.html != "" {
		if err := os.WriteFile(base+".html", []byte(parts.html), 0o600); err != nil {
			return err
		}
		fmt.Printf(" and %s.html (open it in a browser)", base)
	}
	fmt.Println()
	return nil
}
