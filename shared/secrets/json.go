package secrets

import (
	"encoding/json"
	"strings"

	"github.com/criticizer/criticizer/shared/failure"
)

// Unmarshal decodes id's JSON secret into dst, each required field (JSON
// name) a non-empty string; errors never carry the value.
func Unmarshal(id, value string, dst any, required ...string) error {
	var fields map[string]any
	if err := json.Unmarshal([]byte(value), &fields); err != nil {
		return failure.Errorf(failure.InternalBug, "secret %s: want a JSON object with %s", id, strings.Join(required, ", "))
	}
	for _, f := range required {
		if s, ok := field(fields, f).(string); !ok || s == "" {
			return failure.Errorf(failure.InternalBug, "secret %s: want a JSON object with a non-empty string %q", id, f)
		}
	}
	if err := json.Unmarshal([]byte(value), dst); err != nil {
		return failure.Errorf(failure.InternalBug, "secret %s: fields of the wrong type for %T", id, dst)
	}
	return nil
}

// field looks a name up the way encoding/json matches it: exactly, else
// case-insensitively.
func field(fields map[string]any, name string) any {
	if v, ok := fields[name]; ok {
		return v
	}
	for k, v := range fields {
		if strings.EqualFold(k, name) {
			return v
		}
	}
	return nil
}
