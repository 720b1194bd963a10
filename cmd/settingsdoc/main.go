// Command settingsdoc writes docs/configuration.md's "Every setting" tables
// and shared/settings/handles.go from the declaration in shared/settings
// (go generate ./shared/settings).
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/criticizer/criticizer/shared/settings"
)

func main() {
	path := flag.String("docs", "docs/configuration.md", "the Markdown file holding the tables")
	handlesPath := flag.String("handles", "shared/settings/handles.go", "the Go file of the handles")
	flag.Parse()
	if err := run(*path, *handlesPath); err != nil {
		fmt.Fprintln(os.Stderr, "settingsdoc:", err)
		os.Exit(1)
	}
}

func run(path, handlesPath string) error {
	h, err := handles()
	if err != nil {
		return err
	}
	if err := os.WriteFile(handlesPath, h, 0o644); err != nil {
		return err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	doc, err := settings.Docs(string(b))
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return os.WriteFile(path, []byte(doc), 0o644)
}
