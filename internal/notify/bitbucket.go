package notify

import "net/http"

// bitbucketStates are Bitbucket Cloud's build states of each commitState.
var bitbucketStates = map[commitState]string{commitPending: "INPROGRESS", commitSuccess: "SUCCESSFUL", commitFailure: "FAILED"}

// bitbucketStatus is the body of Bitbucket Cloud's create-a-build-status request.
type bitbucketStatus struct {
	State       string `json:"state"`
	Key         string `json:"key"`
	Name        string `json:"name"`
	Description string `json:"description"`
	// URL is required by Bitbucket: the repository's address, as Holdfast has no page of its
	// own to link to.
	URL string `json:"url"`
}

// bitbucketConfigure reads the repository's address, the username and its app password (or
// API token), sent with basic auth.
func bitbucketConfigure(t *Target, s secretKeys) (err error) {
	if err := commitStatusConfigure(ownerRepo)(t, s); err != nil {
		return err
	}
	t.Username, err = s.requiredToken(SecretKeyUsername)
	return err
}

// bitbucketAPI sets a build status on Bitbucket Cloud (POST
// /2.0/repositories/{workspace}/{repo}/commit/{sha}/statuses/build): on api.bitbucket.org for a
// bitbucket.org repository, else on the url's host. Bitbucket Server and Data Center have
// another API and are not covered.
var bitbucketAPI = commitAPI{
	shape: ownerRepo,
	body: func(state commitState, e Event, t Target) any {
		return bitbucketStatus{State: bitbucketStates[state], Key: commitContext(e), Name: commitContext(e),
			Description: commitDescription(e), URL: t.URL}
	},
	path: func(r *repository, commit string) []string {
		if r.host == "bitbucket.org" || r.host == "www.bitbucket.org" {
			r.host = "api.bitbucket.org"
		}
		return append(append([]string{"2.0", "repositories"}, escaped(r.path...)...), "commit", commit, "statuses", "build")
	},
	auth: func(t Target) http.Header {
		h := http.Header{}
		r := http.Request{Header: h}
		r.SetBasicAuth(t.Username, t.Token)
		return h
	},
}

// bitbucketMessage sets the build status of e's commit on Bitbucket Cloud.
func bitbucketMessage(t Target, e Event) (message, error) { return bitbucketAPI.message(t, e) }
