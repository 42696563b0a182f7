package clusterservicestatus_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/notify"
)

// commitStatus is a status a fake Git server was asked to set.
type commitStatus struct {
	path, auth, state, context string
}

// fakeGitServer records the commit statuses posted to it, as Gitea's API takes them.
type fakeGitServer struct {
	mu       sync.Mutex
	statuses []commitStatus
}

func (s *fakeGitServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body struct{ State, Context string }
	if r.Method != http.MethodPost || json.NewDecoder(r.Body).Decode(&body) != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.statuses = append(s.statuses, commitStatus{path: r.URL.Path, auth: r.Header.Get("Authorization"), state: body.State, context: body.Context})
	w.WriteHeader(http.StatusCreated)
}

// on returns the states set on commit, in order.
func (s *fakeGitServer) on(commit string) []commitStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []commitStatus
	for _, st := range s.statuses {
		if strings.HasSuffix(st.path, "/statuses/"+commit) {
			out = append(out, st)
		}
	}
	return out
}

// TestCommitStatusOfAGitSourcedRollout: an AlertRule with a Gitea target sets, on the commit of a
// GitRepository-sourced template, pending when its revision starts rolling out and success when
// the rollout is complete, on the service set's own status line.
func TestCommitStatusOfAGitSourcedRollout(t *testing.T) {
	installGitRepositoryCRD(t)
	ctx := context.Background()
	name, ns := objName(t, ""), objName(t, "ns")
	commit1, commit2 := strings.Repeat("1a", 20), strings.Repeat("2b", 20)
	srv := newArtifactServer(t)
	rev1 := tarGz(t, map[string]string{"app.yaml": artifactConfigMap(ns, "one")})
	setGitArtifact(t, name, srv.serve("/"+name+"/rev1.tar.gz", rev1), "main@sha1:"+commit1, sha256Digest(rev1))
	deleteGitRepositoryAtCleanup(t, name)
	createTemplate(t, name, holdfastv1.ServiceTemplateSpec{Artifact: &holdfastv1.ArtifactSource{
		SourceRef: &holdfastv1.FluxSourceReference{Kind: "GitRepository", Name: name}, Interval: &metav1.Duration{Duration: time.Second},
	}})
	createServiceSet(t, name, holdfastv1.MultiClusterServiceSpec{
		ClusterSelector: selectEnv("dev"), SyncMode: holdfastv1.SyncModeContinuous,
		Services: []holdfastv1.Service{service("web", name, ns)},
		Rollout:  &holdfastv1.RolloutStrategy{},
	})
	expectReady(t, name, "cluster-1")

	git := &fakeGitServer{}
	gitSrv := httptest.NewServer(git)
	defer gitSrv.Close()
	g := NewWithT(t)
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name + "-git", Namespace: templateNamespace},
		StringData: map[string]string{notify.SecretKeyURL: gitSrv.URL + "/org/fleet", notify.SecretKeyToken: "gitea-t0ken"}}
	g.Expect(hub.Create(ctx, secret)).To(Succeed())
	t.Cleanup(func() { _ = hub.Delete(context.Background(), secret) })
	rule := &holdfastv1.AlertRule{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: templateNamespace}, Spec: holdfastv1.AlertRuleSpec{
		ServiceSetSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"commit-status": name}},
		EventTypes:         []holdfastv1.AlertEventType{"RolloutProgressing", "RolloutComplete", "RolloutHalted"},
		RateLimit:          &metav1.Duration{},
		Targets:            []holdfastv1.AlertTarget{{Name: "gitea", Type: holdfastv1.NotificationGitea, SecretRef: holdfastv1.LocalObjectReference{Name: name + "-git"}}},
	}}
	g.Expect(hub.Create(ctx, rule)).To(Succeed())
	t.Cleanup(func() { _ = hub.Delete(context.Background(), rule) })
	expectAlertRuleReady(t, rule)
	labelServiceSet(t, name, "commit-status", name)

	// A new commit is rolled out: pending, then success, on its own status line.
	rev2 := tarGz(t, map[string]string{"app.yaml": artifactConfigMap(ns, "two")})
	setGitArtifact(t, name, srv.serve("/"+name+"/rev2.tar.gz", rev2), "main@sha1:"+commit2, sha256Digest(rev2))
	eventually(t, func(g Gomega) {
		g.Expect(getConfigMap(g, "cluster-1", ns, "app").Data).To(HaveKeyWithValue("revision", "two"))
		got := git.on(commit2)
		g.Expect(got).To(HaveLen(2))
		g.Expect(got[0].state).To(Equal("pending"))
		g.Expect(got[1].state).To(Equal("success"))
	})
	for _, st := range git.on(commit2) {
		g.Expect(st.path).To(Equal("/api/v1/repos/org/fleet/statuses/" + commit2))
		g.Expect(st.context).To(Equal("holdfast/" + name))
		g.Expect(st.auth).To(Equal("token gitea-t0ken"))
	}
}

// deleteGitRepositoryAtCleanup deletes the GitRepository name when the test ends.
func deleteGitRepositoryAtCleanup(t *testing.T, name string) {
	t.Cleanup(func() {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("source.toolkit.fluxcd.io/v1")
		u.SetKind("GitRepository")
		u.SetNamespace(templateNamespace)
		u.SetName(name)
		_ = hub.Delete(context.Background(), u)
	})
}

// expectAlertRuleReady waits for rule to be Ready.
func expectAlertRuleReady(t *testing.T, rule *holdfastv1.AlertRule) {
	t.Helper()
	eventually(t, func(g Gomega) {
		got := &holdfastv1.AlertRule{}
		g.Expect(hub.Get(context.Background(), client.ObjectKeyFromObject(rule), got)).To(Succeed())
		g.Expect(got.Status.Conditions).To(ContainElement(And(HaveField("Type", holdfastv1.ReadyCondition), HaveField("Status", metav1.ConditionTrue))))
	})
}

// labelServiceSet sets the label key=value on the service set name.
func labelServiceSet(t *testing.T, name, key, value string) {
	t.Helper()
	updateServiceSet(t, name, func(m *holdfastv1.MultiClusterService) {
		if m.Labels == nil {
			m.Labels = map[string]string{}
		}
		m.Labels[key] = value
	})
}
