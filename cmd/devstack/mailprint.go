package main

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/mail"
	"os"
	"path/filepath"
	"strings"

	"github.com/criticizer/criticizer/internal/devstack"
)

// mailParts are an e-mail's decoded text and HTML bodies.
type mailParts struct{ text, html string }

// decodeMail reads a MIME message as a mail client would: multipart
// alternatives split, quoted-printable and base64 decoded.
func decodeMail(raw []byte) (mailParts, error) {
	var out mailParts
	msg, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		return out, err
	}
	mt, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil {
		return out, err
	}
	take := func(ct, cte string, r io.Reader) error {
		switch strings.ToLower(cte) {
		case "quoted-printable":
			r = quotedprintable.NewReader(r)
		case "base64":
			r = base64.NewDecoder(base64.StdEncoding, r) // it skips the line breaks
		}
		b, err := io.ReadAll(r)
		if err != nil {
			return err
		}
		switch {
		case strings.HasPrefix(ct, "text/plain"):
			out.text = string(b)
		case strings.HasPrefix(ct, "text/html"):
			out.html = string(b)
		}
		return nil
	}
	if !strings.HasPrefix(mt, "multipart/") {
		return out, take(mt, msg.Header.Get("Content-Transfer-Encoding"), msg.Body)
	}
	mr := multipart.NewReader(msg.Body, params["boundary"])
	for {
		p, err := mr.NextRawPart()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		if err := take(p.Header.Get("Content-Type"), p.Header.Get("Content-Transfer-Encoding"), p); err != nil {
			return out, err
		}
	}
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
