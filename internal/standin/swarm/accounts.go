package swarm

import "net/http"

// Accounts: the users, groups and projects Swarm knows, which decide whose
// callouts count (callouts.go) and who moderates a branch, in Swarm 2022.1's
// shapes (docs/reference/swarm.md, "Who may decide on a review").

// Group is a Perforce group (p4 group's Users and Subgroups).
type Group struct {
	ID               string
	Users, Subgroups []string
}

// Project is a Swarm project with its branches.
type Project struct {
	ID       string
	Branches []Branch
}

// Branch is a project branch (Projects\Model\Project branches' moderators
// and moderators-groups).
type Branch struct {
	ID, Name        string
	Paths           []string
	Moderators      []string
	ModeratorGroups []string
}

// AddUsers makes users known (p4 users): a callout of one adds it.
func (s *Server) AddUsers(users ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, u := range users {
		s.users = appendNew(s.users, u)
	}
}

// AddGroup adds or replaces a group.
func (s *Server) AddGroup(g Group) { set(s, s.groups, g.ID, g) }

// AddProject adds or replaces a project.
func (s *Server) AddProject(p Project) { set(s, s.projects, p.ID, p) }

// groupAPI answers GET /api/v9/groups/{id}: {"group": {p4 group's fields,
// then "config"}}, abridged, as under ignoreExcludeList=true
// (Api\Controller\GroupsController::get and normalizeGroup;
// Groups\Controller\IndexController::groupAction).
func (s *Server) groupAPI(w http.ResponseWriter, r *http.Request) {
	serveAccount(s, w, r, s.groups, func(g Group) map[string]any {
		return map[string]any{"group": map[string]any{"Group": g.ID, "Owners": []string{},
			"Subgroups": orEmpty(g.Subgroups), "Users": orEmpty(g.Users), "config": map[string]any{"name": g.ID}}}
	})
}

// projectAPI answers GET /api/v9/projects/{id}: {"project": {…, "branches":
// [...]}} (Projects\Controller\IndexController::projectAction;
// Projects\Model\Project::getBranches; ProjectsController normalizeProject,
// moderators-groups from API v7 on).
func (s *Server) projectAPI(w http.ResponseWriter, r *http.Request) {
	serveAccount(s, w, r, s.projects, func(p Project) map[string]any {
		branches := []any{}
		for _, b := range p.Branches {
			branches = append(branches, map[string]any{"id": b.ID, "name": b.Name, "paths": orEmpty(b.Paths),
				"moderators": orEmpty(b.Moderators), "moderators-groups": orEmpty(b.ModeratorGroups),
				"defaults": map[string]any{"reviewers": []any{}}})
		}
		return map[string]any{"project": map[string]any{"id": p.ID, "name": p.ID, "branches": branches, "deleted": false}}
	})
}

// serveAccount answers GET …/{id} for one of known: 401 without a login,
// 404 for an unknown id.
func serveAccount[T any](s *Server, w http.ResponseWriter, r *http.Request, known map[string]T, body func(T) map[string]any) {
	if _, ok := s.login(r); !ok {
		apiError(w, r, http.StatusUnauthorized, "Unauthorized")
		return
	}
	s.mu.Lock()
	v, ok := known[r.PathValue("id")]
	s.mu.Unlock()
	if !ok {
		apiError(w, r, http.StatusNotFound, "Not Found")
		return
	}
	writeJSON(w, http.StatusOK, body(v))
}
