package result

import (
	"fmt"
	"strconv"
	"strings"
)

// version is a parsed x.y or x.y.z literal. A missing patch reads as 0, so
// prompt_version "1.0" and "1.0.0" name the same contract.
type version struct{ major, minor, patch uint64 }

func parseVersion(s string, maxParts int) (version, bool) {
	parts := strings.Split(s, ".")
	if len(parts) < 2 || len(parts) > maxParts {
		return version{}, false
	}
	var n [3]uint64
	for i, p := range parts {
		if p == "" || strings.TrimLeft(p, "0123456789") != "" {
			return version{}, false
		}
		v, err := strconv.ParseUint(p, 10, 32)
		if err != nil {
			return version{}, false
		}
		n[i] = v
	}
	return version{n[0], n[1], n[2]}, true
}

// checkSchemaVersion applies rule RC-4: exact match, or a newer
// minor in the same major (minor updates are additive). It reports whether
// the response is a newer minor, whose unknown fields the parser must ignore.
func checkSchemaVersion(got string) (newerMinor bool, err error) {
	want, _ := parseVersion(SchemaVersion, 2)
	v, ok := parseVersion(got, 2)
	if !ok {
		return false, fmt.Errorf("schema_version %q is not major.minor", got)
	}
	if v.major != want.major || v.minor < want.minor {
		return false, fmt.Errorf("schema_version %s is not compatible with %s (same major, minor >= %d)",
			got, SchemaVersion, want.minor)
	}
	return v.minor > want.minor, nil
}

// checkPromptVersion accepts the exact prompt version the request was built
// with, or, when allowed, any patch of the same major.minor.
func checkPromptVersion(got, expected string, allowPatchDrift bool) error {
	want, ok := parseVersion(expected, 3)
	if !ok {
		return fmt.Errorf("configured prompt version %q is not x.y[.z]", expected)
	}
	v, ok := parseVersion(got, 3)
	if !ok {
		return fmt.Errorf("prompt_version %q is not x.y[.z]", got)
	}
	switch {
	case v == want:
		return nil
	case allowPatchDrift && v.major == want.major && v.minor == want.minor:
		return nil
	case allowPatchDrift:
		return fmt.Errorf("prompt_version %s is outside %d.%d.x", got, want.major, want.minor)
	}
	return fmt.Errorf("prompt_version %s does not match %s", got, expected)
}
