package domain

// RulesFileName is the review rules file a team keeps at the root of an
// allow-listed depot path (its schema and meaning: shared/result).
const RulesFileName = ".criticizer.yaml"

// RulesArtifact is the name, under a job's artifact prefix, of the rules
// files the fetch stage read for the change ([]RulesFile, redacted); absent
// when no allow-listed root above the change's files holds one.
const RulesArtifact = "rules.json"

// RulesFile is one review rules file as the submitted depot held it before
// the change.
type RulesFile struct {
	Root    string `json:"root"`   // the allow-listed root it sits at, e.g. "//depot/game/"
	Source  string `json:"source"` // what was printed, e.g. "//depot/game/.criticizer.yaml@41"
	Content string `json:"content,omitempty"`
	// Unreadable says why the file could not be read (the server's
	// protections refused it); the defaults then apply, and say so.
	Unreadable string `json:"unreadable,omitempty"`
}
