package demo

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/localfleet"
	"holdfast.dev/holdfast/internal/render"
)

// The web sample renders to per-cluster data without a control plane, so a broken sample fails
// here rather than half-way through the demo.
func TestWebSampleRendersPerCluster(t *testing.T) {
	cases := []struct {
		name, inline, cluster, env, logLevel string
		replicas                             int64
		feature                              bool
	}{
		{name: "dev cluster", inline: webManifests, cluster: "cluster-1", env: "dev", logLevel: "debug", replicas: 1},
		{name: "prod cluster", inline: webManifests, cluster: "cluster-2", env: "prod", logLevel: "warn", replicas: 2},
		{name: "changed template", inline: webManifestsChanged(), cluster: "cluster-1", env: "dev", logLevel: "debug", replicas: 1, feature: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := render.Render(context.Background(), render.Request{
				Service:         "web",
				Cluster:         render.Cluster{Name: c.cluster, Labels: map[string]string{envLabel: c.env}},
				TargetNamespace: demoAppNamespace,
				TemplateValues:  webDefaults,
				ServiceValues:   webOverrides,
				Source:          render.Source{Inline: c.inline, GoTemplate: true},
			}, nil)
			if err != nil {
				t.Fatalf("rendering the web sample: %v", err)
			}
			byKind := map[string]*unstructured.Unstructured{}
			for _, o := range res.Objects {
				byKind[o.GetKind()] = o
			}
			if ns := byKind["Namespace"]; ns == nil || ns.GetName() != demoAppNamespace {
				t.Errorf("Namespace = %v, want %s", ns, demoAppNamespace)
			}
			data, _, _ := unstructured.NestedStringMap(byKind["ConfigMap"].Object, "data")
			want := map[string]string{"cluster": c.cluster, "env": c.env, "logLevel": c.logLevel}
			if c.feature {
				want[webChangeKey] = webChangeValue
			}
			if len(data) != len(want) {
				t.Errorf("ConfigMap data = %v, want %v", data, want)
			}
			for k, v := range want {
				if data[k] != v {
					t.Errorf("ConfigMap data[%s] = %q, want %q", k, data[k], v)
				}
			}
			replicas, _, _ := unstructured.NestedInt64(byKind["Deployment"].Object, "spec", "replicas")
			if replicas != c.replicas {
				t.Errorf("Deployment replicas = %d, want %d", replicas, c.replicas)
			}
		})
	}
}

func TestSampleSelectors(t *testing.T) {
	clusters := []*holdfastv1.Cluster{{}, {}}
	for i, c := range clusters {
		c.Name, c.Labels = localfleet.TargetName(i+1), localfleet.TargetLabels(i+1)
	}
	selected := func(sel holdfastv1.ClusterSelector) string {
		var names []string
		for _, c := range clusters {
			if selects(sel, c) {
				names = append(names, c.Name)
			}
		}
		return strings.Join(names, ",")
	}
	sets := map[string]*holdfastv1.MultiClusterService{}
	for _, m := range demoServiceSets() {
		sets[m.Name] = m
	}
	for _, c := range []struct {
		what string
		sel  holdfastv1.ClusterSelector
		want string
	}{
		{"apps", sets[appsSet].Spec.ClusterSelector, "cluster-1,cluster-2"},
		{"canary", sets[canarySet].Spec.ClusterSelector, "cluster-1"},
		{"promoted canary", envSelector(canaryPromotionEnv), "cluster-2"},
	} {
		if got := selected(c.sel); got != c.want {
			t.Errorf("%s selects %q, want %q", c.what, got, c.want)
		}
	}
}

// The drift section changes sandbox-apps objects by hand and waits for them to be put back: only
// ContinuousWithDriftDetection does that at once.
func TestAppsSetCorrectsDrift(t *testing.T) {
	for _, m := range demoServiceSets() {
		if m.Name == appsSet && m.Spec.SyncMode != holdfastv1.SyncModeContinuousWithDriftDetection {
			t.Errorf("%s syncMode = %s, want %s", appsSet, m.Spec.SyncMode, holdfastv1.SyncModeContinuousWithDriftDetection)
		}
	}
}
