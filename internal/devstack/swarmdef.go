package devstack

import (
	"errors"
	"os"
	"path/filepath"
	"strings"

	swarmstandin "github.com/criticizer/criticizer/internal/standin/swarm"
)

// SwarmTestDefinition is the Swarm test definition docs/perforce-and-swarm.md
// tells users to create, pointed at the local stack: its JSON body as the
// doc gives it, POSTed to the webhook with the static bearer-token header.
// The demo and the emulator suite send exactly that, so the documented
// setup is the one that runs.
func (l *Local) SwarmTestDefinition() (swarmstandin.TestDefinition, error) {
	root, err := RepoRoot()
	if err != nil {
		return swarmstandin.TestDefinition{}, err
	}
	body, err := swarmTestBody(filepath.Join(root, "docs", "perforce-and-swarm.md"))
	if err != nil {
		return swarmstandin.TestDefinition{}, err
	}
	return swarmstandin.TestDefinition{URL: l.APIURL + "/webhooks/changelist", Body: body,
		Headers: map[string]string{"Authorization": "Bearer " + l.SwarmToken}}, nil
}

// swarmTestBody reads the test definition body from the doc at path: its
// line that starts the webhook's JSON and names the {update} callback.
func swarmTestBody(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, `{"changelist_id":"{change}"`) && strings.Contains(line, `"{update}"`) {
			return line, nil
		}
	}
	return "", errors.New(path + " has no Swarm test definition body")
}
