package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/jsii-runtime-go"

	"github.com/criticizer/criticizer/shared/recipients"
)

// validateRecipients: the recipient policy (see recipientPolicyErrors).
func validateRecipients(c EnvConfig, p *problems) {
	for _, e := range c.recipientPolicyErrors() {
		p.add("%s", e)
	}
}

// recipientPolicyErrors validates the recipient policy settings with the
// functions' own rule (shared/recipients): recipientDomains is required
// outside local, because without it code could be e-mailed to anyone the
// caller names; maxRecipients is 1..50 (0 = the default).
func (c EnvConfig) recipientPolicyErrors() []string {
	var errs []string
	for _, d := range c.RecipientDomains {
		if _, err := recipients.ParseDomain(d); err != nil {
			errs = append(errs, fmt.Sprintf("recipientDomains entry %q: want a domain such as example.com or *.example.com", d))
		}
	}
	return errs
}

// wireRecipientPolicy gives the functions that apply the recipient policy
// (webhook at the door, fetch on resolved recipients, notify before every
// send) its settings.
func wireRecipientPolicy(cfg EnvConfig, fns ...awslambda.Function) {
	max := cfg.MaxRecipients
	if max == 0 {
		max = recipients.DefaultMax
	}
	for _, fn := range fns {
		fn.AddEnvironment(jsii.String(recipients.EnvDomains), jsii.String(strings.Join(cfg.RecipientDomains, ",")), nil)
		fn.AddEnvironment(jsii.String(recipients.EnvMax), jsii.String(strconv.Itoa(max)), nil)
	}
}
