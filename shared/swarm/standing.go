package swarm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"slices"

	"github.com/criticizer/criticizer/shared/failure"
)

// Who may decide on a review besides its participants: the moderators of
// the project branches it touches, and the members of groups. Read as
// Swarm 2022.1 reads them (docs/reference/swarm.md, "Who may decide on a
// review").

// Group is a Perforce group as Swarm's groups API lists it: its users and
// its subgroups (p4 group's Users and Subgroups).
type Group struct {
	ID               string
	Users, Subgroups []string
}

// GetGroup reads group id: GET /api/v9/groups/{id}?ignoreExcludeList=true
// ({"group": {"Group", "Users", "Owners", "Subgroups", …, "config"}}:
// Api\Controller\GroupsController::get, Groups\Controller\IndexController
// groupAction). Swarm answers 404 for a group that does not exist (and a
// project's own group), which is found false; ignoreExcludeList keeps a
// group excluded from mentions, which groupAction would answer
// {"group": null} for, since a moderators group counts whatever mentions
// may do (Project::getModerators reads members without that list).
func (c *Client) GetGroup(ctx context.Context, id string) (Group, bool, error) {
	var doc struct {
		Group *struct {
			Group     string   `json:"Group"`
			Users     []string `json:"Users"`
			Subgroups []string `json:"Subgroups"`
		} `json:"group"`
	}
	what := "swarm group"
	_, err := c.api(ctx, http.MethodGet, "/api/v9/groups/"+url.PathEscape(id), url.Values{"ignoreExcludeList": {"true"}}, nil, &doc, what, false)
	switch {
	case failure.UpstreamCode(err) == http.StatusNotFound:
		return Group{}, false, nil
	case err != nil:
		return Group{}, false, err
	case doc.Group == nil:
		return Group{}, false, nil
	}
	return Group{ID: id, Users: doc.Group.Users, Subgroups: doc.Group.Subgroups}, true, nil
}

// Moderators are who moderate some branches of a project: users, and
// groups whose members moderate (Projects\Model\Project
// getModeratorsWithGroups' Users and Groups).
type Moderators struct {
	Users, Groups []string
}

// GetModerators reads the moderators of project's branches (all of them
// when branches is nil): GET /api/v9/projects/{id}?fields=branches, each
// branch's moderators and moderators-groups (Projects\Model\Project
// getModeratorsWithGroups; the API lists moderators-groups from v7 on,
// ProjectsController::normalizeProject). A project Swarm answers 404 for
// (deleted, or not visible to the API login) has no moderators.
func (c *Client) GetModerators(ctx context.Context, project string, branches []string) (Moderators, error) {
	var doc struct {
		Project *struct {
			Branches []struct {
				ID         string   `json:"id"`
				Moderators []string `json:"moderators"`
				Groups     []string `json:"moderators-groups"`
			} `json:"branches"`
		} `json:"project"`
	}
	what := "swarm project"
	_, err := c.api(ctx, http.MethodGet, "/api/v9/projects/"+url.PathEscape(project), url.Values{"fields": {"branches"}}, nil, &doc, what, false)
	if failure.UpstreamCode(err) == http.StatusNotFound {
		return Moderators{}, nil
	}
	if err != nil {
		return Moderators{}, err
	}
	if doc.Project == nil {
		return Moderators{}, failure.Errorf(failure.SchemaInvalid, "%s: no project in the answer", what)
	}
	var m Moderators
	for _, b := range doc.Project.Branches {
		if branches == nil || slices.Contains(branches, b.ID) {
			m.Users = append(m.Users, b.Moderators...)
			m.Groups = append(m.Groups, b.Groups...)
		}
	}
	return m, nil
}

// wireProjects reads a review's projects: an object of project id to its
// branch ids, or [] when the review touches no project (PHP's empty array).
type wireProjects map[string][]string

func (p *wireProjects) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '{' {
		var l []json.RawMessage
		if err := json.Unmarshal(b, &l); err != nil || len(l) > 0 {
			return errors.New("projects: want an object of project branches") // no reply text in errors
		}
		return nil
	}
	var m map[string][]string
	if err := json.Unmarshal(b, &m); err != nil {
		return errors.New("projects: want branch ids by project")
	}
	*p = m
	return nil
}
