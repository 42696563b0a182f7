package notify

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

// commitStatusTypes are the commit status types, tested here rather than in providers_test.go.
var commitStatusTypes = map[holdfastv1.NotificationType]bool{
	holdfastv1.NotificationGitHub: true, holdfastv1.NotificationGitLab: true,
	holdfastv1.NotificationGitea: true, holdfastv1.NotificationBitbucket: true,
}

const testCommit = "0123456789abcdef0123456789abcdef01234567"

// rolloutOf is an event of type typ about the rollout of service set web at testCommit.
func rolloutOf(typ EventType) Event {
	return Event{Type: typ, Time: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC), MultiClusterService: "web",
		Rollout: &RolloutDetail{Revision: "web-5d8f", StableRevision: "web-1a2b", Wave: "canary"}, Commit: testCommit}
}

// commitBody is the union of the commit status APIs' bodies.
type commitBody struct {
	State, Context, Name, Key, Description, URL string
}

// TestCommitStatusDelivery: each commit status type posts its state for the rollout's phase to
// its API's path for the repository and commit, with its own authentication.
func TestCommitStatusDelivery(t *testing.T) {
	cases := []struct {
		typ                   holdfastv1.NotificationType
		repo                  string
		keys                  map[string]string
		path                  string
		header, value         string
		pending, done, halted string
	}{
		{holdfastv1.NotificationGitHub, "/org/app", map[string]string{"token": "ghp_t0ken"},
			"/api/v3/repos/org/app/statuses/" + testCommit, "Authorization", "Bearer ghp_t0ken", "pending", "success", "failure"},
		{holdfastv1.NotificationGitLab, "/group/sub/app.git", map[string]string{"token": "glpat-t0ken"},
			"/api/v4/projects/group%2Fsub%2Fapp/statuses/" + testCommit, "PRIVATE-TOKEN", "glpat-t0ken", "running", "success", "failed"},
		{holdfastv1.NotificationGitea, "/org/app", map[string]string{"token": "gt_t0ken"},
			"/api/v1/repos/org/app/statuses/" + testCommit, "Authorization", "token gt_t0ken", "pending", "success", "failure"},
		{holdfastv1.NotificationBitbucket, "/workspace/app", map[string]string{"username": "bot", "token": "app-pass"},
			"/2.0/repositories/workspace/app/commit/" + testCommit + "/statuses/build", "Authorization", "Basic Ym90OmFwcC1wYXNz", "INPROGRESS", "SUCCESSFUL", "FAILED"},
	}
	for _, tc := range cases {
		t.Run(string(tc.typ), func(t *testing.T) {
			srv, got := receiver(t, http.StatusCreated)
			keys := map[string]string{"url": srv.URL + tc.repo}
			for k, v := range tc.keys {
				keys[k] = v
			}
			tgt := resolve(t, tc.typ, keys)
			for typ, want := range map[EventType]string{RolloutProgressing: tc.pending, RolloutComplete: tc.done, RolloutHalted: tc.halted} {
				var body commitBody
				req := deliverTo(t, tgt, rolloutOf(typ), got)
				req.decode(t, tc.path, &body)
				if v := req.header.Get(tc.header); v != tc.value {
					t.Errorf("%s = %q, want %q", tc.header, v, tc.value)
				}
				name := body.Context + body.Name
				if tc.typ == holdfastv1.NotificationBitbucket && body.Key != "holdfast/web" {
					t.Errorf("key = %q, want holdfast/web", body.Key)
				}
				if body.State != want || !strings.HasPrefix(name, "holdfast/web") || !strings.Contains(body.Description, "web-5d8f") {
					t.Errorf("%s: body = %+v, want state %s for holdfast/web", typ, body, want)
				}
			}
		})
	}
}

// TestCommitStatusAPIHosts: repositories on the public services go to their API hosts.
func TestCommitStatusAPIHosts(t *testing.T) {
	cases := []struct {
		typ  holdfastv1.NotificationType
		url  string
		want string
	}{
		{holdfastv1.NotificationGitHub, "https://github.com/org/app", "https://api.github.com/repos/org/app/statuses/" + testCommit},
		{holdfastv1.NotificationBitbucket, "https://bitbucket.org/ws/app", "https://api.bitbucket.org/2.0/repositories/ws/app/commit/" + testCommit + "/statuses/build"},
		{holdfastv1.NotificationGitLab, "https://gitlab.com/g/app", "https://gitlab.com/api/v4/projects/g%2Fapp/statuses/" + testCommit},
	}
	for _, tc := range cases {
		tgt := resolve(t, tc.typ, map[string]string{"url": tc.url, "token": "t", "username": "u"})
		m, err := render(tgt, rolloutOf(RolloutComplete))
		if err != nil || m.url != tc.want {
			t.Errorf("%s: url %q, %v; want %q", tc.typ, m.url, err, tc.want)
		}
	}
}

// TestCommitStatusSkips: events without a commit, and events of other types, are nothing to
// send, and the Dispatcher drops them without an outcome or a request.
func TestCommitStatusSkips(t *testing.T) {
	tgt := resolve(t, holdfastv1.NotificationGitHub, map[string]string{"url": "https://github.com/org/app", "token": "t"})
	noCommit := rolloutOf(RolloutComplete)
	noCommit.Commit = ""
	for _, e := range []Event{noCommit, deploymentDrift()} {
		if _, err := render(tgt, e); !errors.Is(err, ErrNothingToSend) {
			t.Errorf("%s: render error %v, want ErrNothingToSend", e.Type, err)
		}
	}
	srv, got := receiver(t, http.StatusCreated)
	tgt = resolve(t, holdfastv1.NotificationGitea, map[string]string{"url": srv.URL + "/org/app", "token": "t"})
	h := start(t, Options{MaxAttempts: 1})
	h.d.Send(tgt, noCommit)
	h.d.Send(tgt, rolloutOf(RolloutComplete))
	if r := h.next(t); r.err != nil || r.event.Commit != testCommit {
		t.Errorf("first outcome = %+v, want the event with a commit, sent", r)
	}
	if c := <-got; !strings.Contains(c.uri, testCommit) {
		t.Errorf("request %s, want the commit's", c.uri)
	}
}

// TestCommitStatusTargets: a commit status target needs a repository's address and a token;
// errors name the key, never a value.
func TestCommitStatusTargets(t *testing.T) {
	cases := []struct {
		typ  holdfastv1.NotificationType
		keys map[string]string
		want string
	}{
		{holdfastv1.NotificationGitHub, map[string]string{"url": "https://github.com/org/app"}, `no key "token"`},
		{holdfastv1.NotificationGitHub, map[string]string{"url": "https://github.com/org", "token": "s3cret"}, "repository's web address"},
		{holdfastv1.NotificationGitea, map[string]string{"url": "https://gitea.example.com/org/app/extra", "token": "s3cret"}, "repository's web address"},
		{holdfastv1.NotificationGitLab, map[string]string{"url": "https://gitlab.example.com/app", "token": "s3cret"}, "repository's web address"},
		{holdfastv1.NotificationBitbucket, map[string]string{"url": "https://bitbucket.org/ws/app", "token": "s3cret"}, `no key "username"`},
	}
	for _, tc := range cases {
		_, err := TargetFromSecret(targetSpec(tc.typ), targetSecret(tc.keys))
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "s3cret") || strings.Contains(err.Error(), "example.com") {
			t.Errorf("%s %v: error %v, want one saying %s without the values", tc.typ, tc.keys, err, tc.want)
		}
	}
}

// TestCommitOf: the commit of Flux's revision formats, and none of others.
func TestCommitOf(t *testing.T) {
	sha256 := strings.Repeat("ab", 32)
	for rev, want := range map[string]string{
		"main@sha1:" + testCommit:             testCommit,
		"sha1:" + strings.ToUpper(testCommit): testCommit,
		"v1.0@sha256:" + sha256:               sha256,
		"main/" + testCommit:                  testCommit,
		"feature/x/" + testCommit:             testCommit,
		"latest@sha256:" + testCommit[:20]:    "",
		"main@sha1:" + testCommit + "0":       "",
		"6.1.0@sha256:zz" + testCommit[:38]:   "",
		"":                                    "",
	} {
		if got := CommitOf(rev); got != want {
			t.Errorf("CommitOf(%q) = %q, want %q", rev, got, want)
		}
	}
}

// TestCommitStatusNoCredentialInErrors: a rejected commit status is reported and logged
// without the repository's address or the token.
func TestCommitStatusNoCredentialInErrors(t *testing.T) {
	rejecting, _ := receiver(t, http.StatusUnauthorized)
	for typ := range commitStatusTypes {
		t.Run(string(typ), func(t *testing.T) {
			h := start(t, Options{MaxAttempts: 1})
			tgt := resolve(t, typ, map[string]string{"url": rejecting.URL + "/secretorg/secretrepo", "token": "T0KENsecret", "username": "USERsecret"})
			h.d.Send(tgt, rolloutOf(RolloutHalted))
			r := h.next(t)
			if r.err == nil {
				t.Fatal("delivered, want a failure")
			}
			for _, s := range []string{r.err.Error(), h.logs.String()} {
				for _, secret := range []string{"secretorg", "T0KENsecret", "USERsecret", strings.TrimPrefix(rejecting.URL, "http://")} {
					if strings.Contains(s, secret) {
						t.Errorf("%q appears in %q", secret, s)
					}
				}
			}
		})
	}
}
