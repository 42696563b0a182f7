package work

import (
	"crypto/rand"
	"encoding/hex"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/render"
)

func configMap(name, value string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name, "namespace": "apps"}, "data": map[string]any{"v": value}, "spec": map[string]any{"replicas": int64(3)}}}
}

func sampleWork(t *testing.T, value string) Work {
	t.Helper()
	objs := []*unstructured.Unstructured{configMap("a", value), configMap("b", "x")}
	d, err := render.Digest(objs)
	if err != nil {
		t.Fatal(err)
	}
	return Work{ServiceSet: "shop", Generation: 4, Spec: holdfastv1.MultiClusterServiceSpec{SyncMode: holdfastv1.SyncModeContinuousWithDriftDetection},
		Services: []Service{{Name: "web", Digest: d, Objects: objs}}}
}

// TestRoundTrip: a work split into parts comes back whole from its parts in any order, integers
// still integers (the objects' digests depend on it).
func TestRoundTrip(t *testing.T) {
	// Incompressible values, so that the work needs several parts.
	big := make([]byte, 3000)
	_, _ = rand.Read(big)
	w := sampleWork(t, hex.EncodeToString(big))
	data, digest, err := Encode(w)
	if err != nil {
		t.Fatal(err)
	}
	parts := Parts(types.NamespacedName{Namespace: "holdfast-pull-edge-1", Name: "shop.edge-1"}, data, digest, 1000)
	if len(parts) < 3 {
		t.Fatalf("%d parts of 1000 bytes for %d bytes", len(parts), len(data))
	}
	var live []corev1.Secret
	for i := len(parts) - 1; i >= 0; i-- {
		live = append(live, *parts[i])
	}
	// A part of another work beside them is not taken.
	live = append(live, corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "old", Annotations: map[string]string{DigestAnnotation: "other", PartAnnotation: "0", PartsAnnotation: "1"}}})
	joined, err := Join(live, digest)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(joined, digest)
	if err != nil {
		t.Fatal(err)
	}
	if got.ServiceSet != "shop" || got.Generation != 4 || len(got.Services) != 1 || got.Services[0].Digest != w.Services[0].Digest {
		t.Fatalf("decoded %+v", got)
	}
	if r, ok := got.Services[0].Objects[0].Object["spec"].(map[string]any)["replicas"].(int64); !ok || r != 3 {
		t.Fatalf("replicas decoded as %T", got.Services[0].Objects[0].Object["spec"].(map[string]any)["replicas"])
	}
	for _, p := range parts {
		if len(p.Name) > 253 || !strings.HasPrefix(p.Name, "shop.edge-1-work-") {
			t.Errorf("part name %q", p.Name)
		}
	}
}

// TestDecodeRefusesWhatTheHubDidNotWrite: a part missing, data altered, or objects that do not
// match their service's digest are errors that quote nothing of the content.
func TestDecodeRefusesWhatTheHubDidNotWrite(t *testing.T) {
	w := sampleWork(t, "s3cr3t-value")
	data, digest, err := Encode(w)
	if err != nil {
		t.Fatal(err)
	}
	parts := Parts(types.NamespacedName{Namespace: "ns", Name: "shop.edge-1"}, data, digest, 100)
	if _, err := Join([]corev1.Secret{*parts[0]}, digest); err == nil {
		t.Error("a work joined from one of its parts")
	}
	if _, err := Decode(data, strings.Repeat("0", 64)); err == nil {
		t.Error("decoded under another digest")
	}
	if _, err := Decode([]byte("not gzip"), digest); err == nil {
		t.Error("decoded garbage")
	}
	altered := w
	altered.Services = []Service{{Name: "web", Digest: w.Services[0].Digest, Objects: []*unstructured.Unstructured{configMap("a", "changed")}}}
	data2, digest2, err := Encode(altered)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Decode(data2, digest2)
	if err == nil || strings.Contains(err.Error(), "changed") || strings.Contains(err.Error(), "s3cr3t") {
		t.Errorf("objects not matching their digest: %v", err)
	}
}

// TestServiceSetSpecKeepsTheHubsBusinessOnTheHub: which clusters a service set selects, its
// rollout across them, where it notifies and its services' overrides (other clusters' among
// them) are not given to an agent.
func TestServiceSetSpecKeepsTheHubsBusinessOnTheHub(t *testing.T) {
	spec := holdfastv1.MultiClusterServiceSpec{
		ClusterSelector: holdfastv1.ClusterSelector{LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}},
		Rollout:         &holdfastv1.RolloutStrategy{},
		Notifications:   []holdfastv1.NotificationTarget{{Name: "pager"}},
		SyncMode:        holdfastv1.SyncModeContinuousWithDriftDetection,
		Services:        []holdfastv1.Service{{Name: "web", Overrides: []holdfastv1.ServiceOverride{{Name: "other-cluster", Values: "secretish: 1"}}}},
	}
	got := ServiceSetSpec(spec)
	if got.ClusterSelector.MatchLabels != nil || got.Rollout != nil || got.Notifications != nil || got.Services[0].Overrides != nil {
		t.Fatalf("given to the agent: %+v", got)
	}
	if got.SyncMode != spec.SyncMode || len(got.Services) != 1 || spec.Rollout == nil || len(spec.Services[0].Overrides) != 1 {
		t.Fatalf("%+v from %+v", got, spec)
	}
}
