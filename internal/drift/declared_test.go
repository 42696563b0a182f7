package drift

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestDeclares(t *testing.T) {
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "a", "labels": map[string]any{"app.kubernetes.io/name": "web"}},
		"data":     map[string]any{"rev-2": "x", "app.properties": "k=v"},
	}}
	for path, want := range map[string]bool{
		".data.rev-2":          true,
		".data.rev-1":          false, // removed by a new revision
		".data.app.properties": true,  // a key with a dot
		".data.app":            false,
		".metadata.labels.app.kubernetes.io/name": true,
		".metadata.labels.team":                   false,
		".spec.containers[name=\"web\"].image":    true, // lists are not told apart
		".spec":                                   false,
	} {
		if got := Declares(obj, path); got != want {
			t.Errorf("Declares(%s) = %v, want %v", path, got, want)
		}
	}
}
