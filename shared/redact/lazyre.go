package redact

import (
	"regexp"
	"sync"
)

// lazy returns a package-level regular expression compiled on first use, so
// a function's cold start pays for none of this package's expressions (every
// function links the package through the sanitizer).
func lazy(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
