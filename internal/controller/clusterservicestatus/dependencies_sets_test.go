package clusterservicestatus

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/event"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/dependency"
	"holdfast.dev/holdfast/internal/tenancy"
)

// TestSetDependencies: what a service set's services depend on in other service sets on one
// cluster, read from a hub cache holding those sets and their status objects: each other set's
// service named is ready, or says why not (the set missing, not selecting the cluster, not
// declaring the service, or its service not healthy there), and a service naming another
// tenant's set, or in a cycle across sets, is refused.
func TestSetDependencies(t *testing.T) {
	set := func(name, tenant string, services ...holdfastv1.Service) *holdfastv1.MultiClusterService {
		m := &holdfastv1.MultiClusterService{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: holdfastv1.MultiClusterServiceSpec{Services: services}}
		if tenant != "" {
			m.Labels = map[string]string{holdfastv1.TenantNamespaceLabel: tenant}
		}
		return m
	}
	svc := func(name string, deps ...string) holdfastv1.Service {
		return holdfastv1.Service{Name: name, DependsOn: deps}
	}
	web := set("web", "",
		svc("app", "storage/db", "cache"), svc("cache"), svc("gone", "storage/gone"), svc("missing", "nowhere/x"),
		svc("far", "elsewhere/z"), svc("slow", "storage/slow"), svc("tenant", "team-a.db/db"), svc("loop", "ring/r"))
	disabled := svc("gone")
	disabled.Disabled = true
	storage := set("storage", "", svc("db"), svc("slow"), disabled)
	status := &holdfastv1.ClusterServiceStatus{
		ObjectMeta: metav1.ObjectMeta{Namespace: "fleet", Name: "storage.c1"},
		Spec:       holdfastv1.ClusterServiceStatusSpec{MultiClusterService: "storage", Cluster: "c1"},
		Status: holdfastv1.ClusterServiceStatusStatus{Services: []holdfastv1.ServiceStatus{
			{Name: "db", Ready: metav1.ConditionTrue, Health: holdfastv1.HealthCurrent},
			{Name: "slow", Ready: metav1.ConditionTrue, Health: holdfastv1.HealthInProgress, HealthMessage: "ConfigMap/slow: not yet"},
		}},
	}
	scheme := runtime.NewScheme()
	if err := holdfastv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	hub := fake.NewClientBuilder().WithScheme(scheme).WithObjects(web, storage, status,
		set("elsewhere", "", svc("z")), set("team-a.db", "team-a", svc("db")), set("ring", "", svc("r", "web/loop"))).Build()
	r := &Reconciler{Client: hub, Tenancy: tenancy.Policy{PlatformNamespaces: []string{"fleet"}}}
	s := &scope{mcs: web, css: &holdfastv1.ClusterServiceStatus{ObjectMeta: metav1.ObjectMeta{Namespace: "fleet", Name: "web.c1"},
		Spec: holdfastv1.ClusterServiceStatusSpec{MultiClusterService: "web", Cluster: "c1"}}}
	var rendered []renderedService
	for _, sv := range web.Spec.Services {
		rendered = append(rendered, renderedService{svc: sv})
	}

	problems, others := r.setDependencies(context.Background(), s, rendered)
	for name, want := range map[string]problem{
		"tenant": {holdfastv1.CrossNamespaceReferenceReason, "depends only on platform service sets"},
		"loop":   {holdfastv1.InvalidDependencyReason, "cycle across service sets: web/loop -> ring/r -> web/loop"},
	} {
		if p := problems[name]; p == nil || p.reason != want.reason || !strings.Contains(p.message, want.message) {
			t.Errorf("%s: problem %+v, want %+v", name, p, want)
		}
	}
	if len(problems) != 2 {
		t.Errorf("problems = %v, want only tenant's and loop's", problems)
	}
	for ref, want := range map[dependency.Ref]string{
		{Set: "storage", Service: "db"}:   "",
		{Set: "storage", Service: "slow"}: "not healthy there (InProgress: ConfigMap/slow: not yet)",
		{Set: "storage", Service: "gone"}: `MultiClusterService storage declares no service "gone", or disables it`,
		{Set: "nowhere", Service: "x"}:    "MultiClusterService nowhere does not exist",
		{Set: "elsewhere", Service: "z"}:  "MultiClusterService elsewhere has no status object for Cluster fleet/c1",
	} {
		got, ok := others[ref]
		if !ok || (want == "") != (got == "") || !strings.Contains(got, want) {
			t.Errorf("%s: %q (looked at: %v), want %q", ref, got, ok, want)
		}
	}

	if p, o := r.setDependencies(context.Background(), s, []renderedService{{svc: svc("db")}, {svc: svc("app", "db")}}); p != nil || o != nil {
		t.Errorf("a set depending on no other set: %v, %v; want nothing looked at", p, o)
	}
}

// TestReadinessChanged: only a change of whether a service of the status object is ready for
// its dependents passes, not the other status writes.
func TestReadinessChanged(t *testing.T) {
	css := func(count int32, services ...holdfastv1.ServiceStatus) client.Object {
		return &holdfastv1.ClusterServiceStatus{Status: holdfastv1.ClusterServiceStatusStatus{ResourceCount: count, Services: services}}
	}
	ready := holdfastv1.ServiceStatus{Name: "db", Ready: metav1.ConditionTrue, Health: holdfastv1.HealthCurrent}
	progressing := holdfastv1.ServiceStatus{Name: "db", Ready: metav1.ConditionTrue, Health: holdfastv1.HealthInProgress}
	failed := holdfastv1.ServiceStatus{Name: "db", Ready: metav1.ConditionTrue, Health: holdfastv1.HealthFailed}
	p := readinessChanged()
	for _, tt := range []struct {
		name     string
		old, new client.Object
		want     bool
	}{
		{"became healthy", css(1, progressing), css(1, ready), true},
		{"became unhealthy", css(1, ready), css(1, failed), true},
		{"a ready service appeared", css(0), css(1, ready), true},
		{"still not ready", css(1, progressing), css(1, failed), false},
		{"other fields", css(1, ready), css(2, ready), false},
	} {
		if got := p.Update(event.UpdateEvent{ObjectOld: tt.old, ObjectNew: tt.new}); got != tt.want {
			t.Errorf("%s: passes %v, want %v", tt.name, got, tt.want)
		}
	}
	if p.Create(event.CreateEvent{Object: css(1, ready)}) || p.Delete(event.DeleteEvent{Object: css(1, ready)}) {
		t.Error("creations and deletions pass")
	}
}
