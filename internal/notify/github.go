package notify

import "net/http"

// githubStates are GitHub's commit states of each commitState.
var githubStates = map[commitState]string{commitPending: "pending", commitSuccess: "success", commitFailure: "failure"}

// githubStatus is the body of GitHub's (and Gitea's) create-a-commit-status request.
type githubStatus struct {
	State       string `json:"state"`
	Context     string `json:"context"`
	Description string `json:"description"`
}

// githubBody is the status state sets on GitHub or Gitea.
func githubBody(state commitState, e Event, _ Target) any {
	return githubStatus{State: githubStates[state], Context: commitContext(e), Description: commitDescription(e)}
}

// githubAPI sets a commit status (POST /repos/{owner}/{repo}/statuses/{sha}) with a token: on
// api.github.com for a github.com repository, else on the GitHub Enterprise Server's /api/v3.
var githubAPI = commitAPI{
	shape: ownerRepo,
	body:  githubBody,
	path: func(r *repository, commit string) []string {
		path := append(append([]string{"repos"}, escaped(r.path...)...), "statuses", commit)
		if r.host == "github.com" || r.host == "www.github.com" {
			r.host = "api.github.com"
			return path
		}
		return append([]string{"api", "v3"}, path...)
	},
	auth: func(t Target) http.Header {
		return http.Header{"Authorization": {"Bearer " + t.Token}, "Accept": {"application/vnd.github+json"}}
	},
}

// githubMessage sets the commit status of e's commit on GitHub.
func githubMessage(t Target, e Event) (message, error) { return githubAPI.message(t, e) }
