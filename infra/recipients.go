package main

import (
	"fmt"

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
