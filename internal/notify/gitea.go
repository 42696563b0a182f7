package notify

import "net/http"

// giteaAPI sets a commit status on Gitea or Forgejo (the same API: POST
// /api/v1/repos/{owner}/{repo}/statuses/{sha}, with GitHub's body), with an access token.
var giteaAPI = commitAPI{
	shape: ownerRepo,
	body:  githubBody,
	path: func(r *repository, commit string) []string {
		return append(append([]string{"api", "v1", "repos"}, escaped(r.path...)...), "statuses", commit)
	},
	auth: func(t Target) http.Header { return http.Header{"Authorization": {"token " + t.Token}} },
}

// giteaMessage sets the commit status of e's commit on Gitea or Forgejo.
func giteaMessage(t Target, e Event) (message, error) { return giteaAPI.message(t, e) }
