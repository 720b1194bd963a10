package main

import "github.com/criticizer/criticizer/shared/recipients"

// validateRecipients: each recipientDomains entry parses with the functions'
// own rule (shared/recipients); that it is required outside local, and
// maxRecipients' range, are the declaration's.
func validateRecipients(c EnvConfig, p *problems) {
	for _, d := range c.RecipientDomains {
		if _, err := recipients.ParseDomain(d); err != nil {
			p.add("recipientDomains entry %q: want a domain such as example.com or *.example.com", d)
		}
	}
}
