package main

import (
	"fmt"

	"github.com/criticizer/criticizer/shared/settings"
)

// validatePlaceholders refuses, outside local, the placeholder values the
// declaration names (shared/settings: an all-zero fingerprint or layer
// checksum, an address in a reserved example domain). Such a value passes
// every other check and fails the first job, so synth fails instead.
func validatePlaceholders(c EnvConfig, p *problems) {
	if c.isLocal {
		return
	}
	keys, err := jsonKeys(c)
	if err != nil {
		p.add("settings: %v", err)
		return
	}
	for _, msg := range settings.Check(func(k string) []string { return stringsOf(keys[k]) }) {
		p.add("%s", msg)
	}
}

// stringsOf is a cdk.json value's strings: a string, or a list's elements.
func stringsOf(v any) []string {
	switch v := v.(type) {
	case string:
		return []string{v}
	case []any:
		var out []string
		for _, e := range v {
			out = append(out, fmt.Sprint(e))
		}
		return out
	}
	return nil
}
