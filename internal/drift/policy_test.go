package drift

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

func TestPolicyFor(t *testing.T) {
	mcs := &holdfastv1.MultiClusterService{Spec: holdfastv1.MultiClusterServiceSpec{
		SyncMode: holdfastv1.SyncModeContinuousWithDriftDetection,
		Drift: &holdfastv1.DriftPolicy{Action: holdfastv1.DriftActionReport,
			Ignore: []holdfastv1.IgnoreRule{
				{Paths: []string{"/spec/replicas"}, Target: &holdfastv1.ResourceSelector{Group: ptr.To("apps"), Kind: "Deployment", Name: "web-*"}},
				{Paths: []string{"/data/rotated"}, Target: &holdfastv1.ResourceSelector{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"rotate": "yes"}}}},
				{Paths: []string{"no-slash"}},
			},
			Fight: &holdfastv1.FightPolicy{MaxCorrections: 2}},
	}}
	svc := holdfastv1.Service{Name: "api", Drift: &holdfastv1.ServiceDriftPolicy{Action: holdfastv1.DriftActionCorrect,
		Ignore: []holdfastv1.IgnoreRule{{Paths: []string{"/metadata/annotations/x"}}}}}
	p := PolicyFor(mcs, svc)
	if p.Action != holdfastv1.DriftActionCorrect || !p.Detect || p.FightMax != 2 || p.FightWindow != holdfastv1.DefaultFightWindow {
		t.Fatalf("policy = %+v", p)
	}
	if len(p.Problems) != 1 || len(p.ignore) != 3 {
		t.Fatalf("problems %v, rules %d: want the rule without a leading / reported and the others kept", p.Problems, len(p.ignore))
	}
	dep := &unstructured.Unstructured{}
	dep.SetAPIVersion("apps/v1")
	dep.SetKind("Deployment")
	dep.SetName("web-1")
	if got := p.IgnoredPaths(dep); len(got) != 2 || got[0] != "/spec/replicas" || got[1] != "/metadata/annotations/x" {
		t.Fatalf("IgnoredPaths(Deployment web-1) = %v", got)
	}
	cm := &unstructured.Unstructured{}
	cm.SetAPIVersion("v1")
	cm.SetKind("ConfigMap")
	cm.SetName("web-1")
	cm.SetLabels(map[string]string{"rotate": "yes"})
	if got := p.IgnoredPaths(cm); len(got) != 2 || got[0] != "/data/rotated" {
		t.Fatalf("IgnoredPaths(ConfigMap) = %v", got)
	}
	if p.CorrectsNow(time.Now()) != true {
		t.Fatal("a service overriding the action with Correct does not correct")
	}
	if q := PolicyFor(mcs, holdfastv1.Service{Name: "other"}); q.CorrectsNow(time.Now()) {
		t.Fatal("Report without windows corrects")
	}
}

func TestRecreates(t *testing.T) {
	obj := func(apiVersion, kind string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion(apiVersion)
		u.SetKind(kind)
		return u
	}
	job, ns, crd := obj("batch/v1", "Job"), obj("v1", "Namespace"), obj("apiextensions.k8s.io/v1", "CustomResourceDefinition")
	cases := []struct {
		name   string
		policy *holdfastv1.ImmutablePolicy
		want   map[*unstructured.Unstructured]bool
	}{
		{"no policy: report", nil, map[*unstructured.Unstructured]bool{job: false, ns: false, crd: false}},
		{"Report", &holdfastv1.ImmutablePolicy{Action: holdfastv1.ImmutableReport}, map[*unstructured.Unstructured]bool{job: false, ns: false, crd: false}},
		{"Recreate spares Namespaces and CRDs", &holdfastv1.ImmutablePolicy{Action: holdfastv1.ImmutableRecreate},
			map[*unstructured.Unstructured]bool{job: true, ns: false, crd: false}},
		{"Recreate with Namespaces and CRDs", &holdfastv1.ImmutablePolicy{Action: holdfastv1.ImmutableRecreate, RecreateNamespacesAndCRDs: true},
			map[*unstructured.Unstructured]bool{job: true, ns: true, crd: true}},
	}
	for _, c := range cases {
		mcs := &holdfastv1.MultiClusterService{Spec: holdfastv1.MultiClusterServiceSpec{Drift: &holdfastv1.DriftPolicy{Immutable: c.policy}}}
		p := PolicyFor(mcs, holdfastv1.Service{Name: "web"})
		for o, want := range c.want {
			if got := p.Recreates(o); got != want {
				t.Errorf("%s: Recreates(%s) = %v, want %v", c.name, o.GetKind(), got, want)
			}
		}
	}
}
