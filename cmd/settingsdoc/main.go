// Command settingsdoc writes docs/configuration.md's "Every setting" tables
// from the declaration in shared/settings (go generate ./shared/settings).
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/criticizer/criticizer/shared/settings"
)

func main() {
	path := flag.String("docs", "docs/configuration.md", "the Markdown file holding the tables")
	flag.Parse()
	if err := run(*path); err != nil {
		fmt.Fprintln(os.Stderr, "settingsdoc:", err)
		os.Exit(1)
	}
}

func run(path string) error {
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
