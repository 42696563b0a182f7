package notify

import (
	"errors"
	"net/http"
	"net/url"
	"regexp"
	"strings"
)

// The commit status types (GitHub, GitLab, Gitea, Bitbucket) report a service set's rollout on
// the Git commit its templates were rendered from, as a status line of its own
// ("holdfast/<service set>"): pending while the revision rolls out, success when it is
// complete, failure when it halted. The target's url is the repository's web address; the API
// endpoint is derived from it, so any host works.

// ErrNothingToSend is returned by a render that has nothing to send for an event (a commit
// status type and an event without a commit, or of a type it does not report). The Dispatcher
// drops such an event quietly: it is neither a failure nor retried.
var ErrNothingToSend = errors.New("nothing to send for this event")

// commitStatusMaxDescription is the longest description every commit status API accepts
// (GitHub's limit), in characters.
const commitStatusMaxDescription = 140

// commitState is what a rollout event means for its commit.
type commitState int

const (
	commitPending commitState = iota
	commitSuccess
	commitFailure
)

// commitStates maps the rollout events the commit status types report to their state.
var commitStates = map[EventType]commitState{
	RolloutProgressing: commitPending,
	RolloutComplete:    commitSuccess,
	RolloutHalted:      commitFailure,
}

// commitEvent returns the state e sets on its commit, ErrNothingToSend when e sets none.
func commitEvent(e Event) (commitState, error) {
	state, ok := commitStates[e.Type]
	if !ok || e.Commit == "" {
		return 0, ErrNothingToSend
	}
	return state, nil
}

// commitContext names the status line of e's service set.
func commitContext(e Event) string { return "holdfast/" + e.MultiClusterService }

// commitDescription says briefly what became of the rollout: the phase, the wave and the
// revision, within the APIs' limit.
func commitDescription(e Event) string {
	s := title(e.Type)
	if ro := e.Rollout; ro != nil {
		if ro.Wave != "" && e.Type != RolloutComplete {
			s += " at wave " + ro.Wave
		}
		if ro.Revision != "" {
			s += ", revision " + ro.Revision
		}
	}
	return truncate(s, commitStatusMaxDescription, charactersOf)
}

// commitSHA is the hex commit in a Flux artifact revision: "main@sha1:<sha>", "sha256:<sha>"
// or the older "main/<sha>"; "" when it names none.
func commitSHA(revision string) string {
	sha := revision
	if i := strings.LastIndex(revision, ":"); i >= 0 && (strings.HasSuffix(revision[:i], "sha1") || strings.HasSuffix(revision[:i], "sha256")) {
		sha = revision[i+1:]
	} else if i := strings.LastIndex(revision, "/"); i >= 0 {
		sha = revision[i+1:]
	}
	if !hexCommit.MatchString(sha) {
		return ""
	}
	return strings.ToLower(sha)
}

// CommitOf is the commit of a Flux artifact revision (status.artifact.revision of a template
// with a GitRepository source), "" when it names none.
func CommitOf(revision string) string { return commitSHA(revision) }

// hexCommit is a SHA-1 or SHA-256 commit ID.
var hexCommit = regexp.MustCompile(`^(?:[0-9a-fA-F]{40}|[0-9a-fA-F]{64})$`)

// repository is a Git repository's web address, split for the APIs: its scheme and host, and
// its path (owner/repo, or group/subgroup/repo on GitLab) without a trailing ".git".
type repository struct {
	scheme, host string
	path         []string
}

// repositoryShape is the shape of a repository's web address, for the types whose path is
// an owner and a name; GitLab's groups may nest.
type repositoryShape struct {
	minParts, maxParts int
	example            string
}

var (
	ownerRepo  = repositoryShape{2, 2, "https://host/owner/repository"}
	gitlabRepo = repositoryShape{2, 32, "https://host/group/subgroup/repository"}
)

// parseRepository splits raw, a repository's web address of shape; false when it is not one.
func parseRepository(raw string, shape repositoryShape) (repository, bool) {
	u, err := url.Parse(raw)
	if err != nil || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return repository{}, false
	}
	path := strings.TrimSuffix(strings.Trim(u.Path, "/"), ".git")
	parts := strings.Split(path, "/")
	if len(parts) < shape.minParts || len(parts) > shape.maxParts {
		return repository{}, false
	}
	for _, p := range parts {
		if p == "" || p == "." || p == ".." {
			return repository{}, false
		}
	}
	return repository{scheme: u.Scheme, host: u.Host, path: parts}, true
}

// endpoint is scheme://host followed by path, whose segments are escaped already.
func (r repository) endpoint(path ...string) string {
	u := url.URL{Scheme: r.scheme, Host: r.host}
	return u.JoinPath(path...).String()
}

// escaped is segments, each escaped for a URL path.
func escaped(segments ...string) []string {
	out := make([]string, len(segments))
	for i, s := range segments {
		out[i] = url.PathEscape(s)
	}
	return out
}

// commitStatusConfigure checks that the url is a repository's web address of shape and reads
// the token.
func commitStatusConfigure(shape repositoryShape) func(t *Target, s secretKeys) error {
	return func(t *Target, s secretKeys) (err error) {
		if _, ok := parseRepository(t.URL, shape); !ok {
			return s.invalid(SecretKeyURL, "is not a repository's web address, like %s", shape.example)
		}
		t.Token, err = s.requiredToken(SecretKeyToken)
		return err
	}
}

// commitAPI is how one commit status API is called.
type commitAPI struct {
	// shape is the shape of the repository's web address.
	shape repositoryShape
	// body is the request's body, marshalled to JSON, setting state on e's commit.
	body func(state commitState, e Event, t Target) any
	// path returns the endpoint's path segments for the repository and commit; it may set the
	// API's host.
	path func(r *repository, commit string) []string
	// auth is the request's authentication header.
	auth func(t Target) http.Header
}

// message posts the status e sets on its commit to the API of t's repository;
// ErrNothingToSend when e sets none.
func (api commitAPI) message(t Target, e Event) (message, error) {
	state, err := commitEvent(e)
	if err != nil {
		return message{}, err
	}
	r, ok := parseRepository(t.URL, api.shape)
	if !ok {
		return message{}, errors.New("the target's url is not a repository's web address")
	}
	m, err := jsonMessage(api.body(state, e, t))
	if err != nil {
		return message{}, err
	}
	segments := api.path(&r, e.Commit) // may change the host, e.g. to the API's
	m.url = r.endpoint(segments...)
	m.header = api.auth(t)
	return m, nil
}
