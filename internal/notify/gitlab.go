package notify

import (
	"net/http"
	"net/url"
	"strings"
)

// gitlabStates are GitLab's commit states of each commitState.
var gitlabStates = map[commitState]string{commitPending: "running", commitSuccess: "success", commitFailure: "failed"}

// gitlabStatus is the body of GitLab's set-a-commit-status request.
type gitlabStatus struct {
	State       string `json:"state"`
	Name        string `json:"name"`
	Description string `json:"description"`
}

// gitlabAPI sets a commit status (POST /api/v4/projects/{id}/statuses/{sha}, the project named
// by its URL-encoded path, so that groups may nest) with a token sent as PRIVATE-TOKEN.
var gitlabAPI = commitAPI{
	shape: gitlabRepo,
	body: func(state commitState, e Event, _ Target) any {
		return gitlabStatus{State: gitlabStates[state], Name: commitContext(e), Description: commitDescription(e)}
	},
	path: func(r *repository, commit string) []string {
		return []string{"api", "v4", "projects", url.PathEscape(strings.Join(r.path, "/")), "statuses", commit}
	},
	auth: func(t Target) http.Header { return http.Header{"PRIVATE-TOKEN": {t.Token}} },
}

// gitlabMessage sets the commit status of e's commit on GitLab.
func gitlabMessage(t Target, e Event) (message, error) { return gitlabAPI.message(t, e) }
