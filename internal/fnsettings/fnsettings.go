// Package fnsettings lists, for each function under functions/, the settings
// loaders its wiring calls. Each loader belongs to the package that uses the
// settings (llmstage.SettingsFromEnv, …) and reads them through a
// config.Reader, which records every variable looked up. Tests use the list
// twice: internal/repocheck checks that each main calls exactly these loaders
// and reads no variable itself, and infra checks that the stack sets every
// variable they read, from cdk.json, to a value they accept.
package fnsettings

import (
	"github.com/criticizer/criticizer/shared/config"
	"github.com/criticizer/criticizer/shared/digest"
	"github.com/criticizer/criticizer/shared/doctor"
	"github.com/criticizer/criticizer/shared/evidence"
	"github.com/criticizer/criticizer/shared/fetchstage"
	"github.com/criticizer/criticizer/shared/jobpage"
	"github.com/criticizer/criticizer/shared/llmstage"
	"github.com/criticizer/criticizer/shared/mailchannel"
	"github.com/criticizer/criticizer/shared/notifysettings"
	"github.com/criticizer/criticizer/shared/outbox"
	"github.com/criticizer/criticizer/shared/outcome"
	"github.com/criticizer/criticizer/shared/retention"
	"github.com/criticizer/criticizer/shared/swarm"
	"github.com/criticizer/criticizer/shared/webhook"
)

// Loader is one settings loader: Name is how a main calls it.
type Loader struct {
	Name string
	Load func(*config.Reader)
}

// Common is what coldstart.Load reads for every function.
var Common = Loader{"config.LoadCommon", func(r *config.Reader) { config.LoadCommon(r) }}

// policy is the noise filter's loader, which the functions that judge or
// show reviewers' reactions call beside their own.
var policy = Loader{"outcome.PolicyFromEnv", func(r *config.Reader) { outcome.PolicyFromEnv(r) }}

// Functions maps each function (its directory under functions/) to the
// loaders its main calls besides Common.
var Functions = map[string][]Loader{
	"webhook": {{"webhook.SettingsFromEnv", func(r *config.Reader) { webhook.SettingsFromEnv(r) }}, policy},
	"fetch":   {{"fetchstage.SettingsFromEnv", func(r *config.Reader) { fetchstage.SettingsFromEnv(r, nil) }}},
	"llm":     {{"llmstage.SettingsFromEnv", func(r *config.Reader) { llmstage.SettingsFromEnv(r) }}},
	"notify": {{"notifysettings.SettingsFromEnv", func(r *config.Reader) { notifysettings.SettingsFromEnv(r) }},
		{"mailchannel.SettingsFromEnv", func(r *config.Reader) { mailchannel.SettingsFromEnv(r) }}},
	"sweeper": {{"evidence.SettingsFromEnv", func(r *config.Reader) { evidence.SettingsFromEnv(r) }}, {"retention.SettingsFromEnv", func(r *config.Reader) { retention.SettingsFromEnv(r) }},
		{"swarm.SettingsFromEnv", func(r *config.Reader) { swarm.SettingsFromEnv(r, swarm.ForComments) }},
		{"outbox.SettingsFromEnv", func(r *config.Reader) { outbox.SettingsFromEnv(r) }}, policy},
	"sesevents": nil,
	"jobpage":   {{"jobpage.SettingsFromEnv", func(r *config.Reader) { jobpage.SettingsFromEnv(r) }}, policy},
	"digest":    {{"digest.SettingsFromEnv", func(r *config.Reader) { digest.SettingsFromEnv(r) }}},
	"doctor":    {{"doctor.SettingsFromEnv", func(r *config.Reader) { doctor.SettingsFromEnv(r, nil) }}},
}

// Read runs the loaders of function over env and returns the variables
// they looked up and the problems they found.
func Read(function string, env map[string]string) (keys []string, err error) {
	r := config.NewReaderFrom(env)
	Common.Load(r)
	for _, l := range Functions[function] {
		l.Load(r)
	}
	return r.Keys(), r.Err()
}
