package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/aws/jsii-runtime-go"

	"github.com/criticizer/criticizer/shared/settings"
)

// validateDeclared checks each cdk.json value against what its declaration
// accepts (shared/settings: an integer's range, a choice's values, a flag),
// in every environment: the functions' loaders refuse the same values at
// cold start, and stack-only settings (batchSize, architecture) have no
// other check. A key Required where c is must not be empty. A key left out of the JSON (omitempty and zero: "the
// function's default") is not checked; validatePlaceholders then refuses,
// outside local, the values the declaration names as placeholders.
func validateDeclared(c EnvConfig, p *problems) {
	values, err := jsonKeys(c)
	if err != nil {
		p.add("settings: %v", err)
		return
	}
	for _, s := range settings.Declared {
		if s.Required == settings.Everywhere || s.Required == settings.OutsideLocal && !c.isLocal {
			for _, k := range s.Keys {
				if v := values[k]; v == nil || v == "" || fmt.Sprint(v) == "[]" {
					p.add("%s is empty: required %s (docs/configuration.md)", k, s.Required)
				}
			}
		}
		if s.Accepts.Kind == settings.Text {
			continue
		}
		for i, k := range s.Keys {
			v, ok := values[k]
			if !ok {
				continue
			}
			as := ""
			if i < len(s.Vars) { // the variable the functions read it as, named too
				as = " (" + s.Vars[i] + ")"
			}
			if err := s.Accepts.Check(settings.JSONText(v)); err != nil {
				p.add("%s %s%s: %v (docs/configuration.md)", k, settings.JSONText(v), as, err)
			}
		}
	}
}

// jsonKeys is c as cdk.json spells it: its keys and their values, its
// Passed ones included.
func jsonKeys(c EnvConfig) (map[string]any, error) {
	b, err := json.Marshal(envFields(c))
	if err != nil {
		return nil, err
	}
	keys := maps.Clone(c.Passed)
	return keys, json.Unmarshal(b, &keys)
}

// declaredEnv is function dir's settings environment, derived from the
// declarations: each variable of a setting whose ReadBy names dir (or All),
// set to the value cdk.json gives its key (values, as jsonKeys spells c), as
// the function's loader reads it. A key left empty is left unset, so the
// function takes its declared default; a Computed setting's variable is the
// stack's to set.
func declaredEnv(values map[string]any, dir string) map[string]*string {
	env := map[string]*string{}
	for _, s := range settings.Declared {
		if s.Computed || !(slices.Contains(s.ReadBy, dir) || slices.Equal(s.ReadBy, settings.All)) {
			continue
		}
		for i, name := range s.Vars {
			if i >= len(s.Keys) {
				break
			}
			if v := settings.EnvText(values[s.Keys[i]]); v != "" {
				env[name] = jsii.String(v)
			}
		}
	}
	return env
}
