package apply

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"holdfast.dev/holdfast/internal/fieldset"
)

func deployment(replicas int64, managed ...metav1.ManagedFieldsEntry) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "namespace": "default"},
		"spec":     map[string]any{"replicas": replicas, "paused": false},
	}}
	u.SetManagedFields(managed)
	return u
}

func TestLeaveOut(t *testing.T) {
	const both = `{"f:spec":{"f:replicas":{},"f:paused":{}}}`
	const pausedOnly = `{"f:spec":{"f:paused":{}}}`
	const replicasOnly = `{"f:spec":{"f:replicas":{}}}`
	cases := []struct {
		name     string
		live     *unstructured.Unstructured
		wantDrop bool
	}{
		{"another manager owns a different value", deployment(5,
			entry(fieldset.FieldManager, metav1.ManagedFieldsOperationApply, pausedOnly),
			entry("hpa", metav1.ManagedFieldsOperationUpdate, replicasOnly)), true},
		{"Holdfast still owns it: the declaration decides", deployment(5,
			entry(fieldset.FieldManager, metav1.ManagedFieldsOperationApply, both)), false},
		{"same value: nothing to protect", deployment(2,
			entry(fieldset.FieldManager, metav1.ManagedFieldsOperationApply, pausedOnly),
			entry("hpa", metav1.ManagedFieldsOperationUpdate, replicasOnly)), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			obj := deployment(2)
			dropped := leaveOut(obj, c.live, []string{"/spec/replicas", "/spec/missing"})
			_, has := obj.Object["spec"].(map[string]any)["replicas"]
			if has == c.wantDrop || (len(dropped) == 1) != c.wantDrop {
				t.Fatalf("replicas kept=%v dropped=%v, want dropped=%v", has, dropped, c.wantDrop)
			}
			if _, ok := obj.Object["spec"].(map[string]any)["paused"]; !ok {
				t.Fatal("a field no rule names was removed")
			}
		})
	}
}

func TestRemovePointerFromList(t *testing.T) {
	root := map[string]any{"spec": map[string]any{"ports": []any{"a", "b", "c"}}}
	if !removePointer(root, []string{"spec", "ports", "1"}) {
		t.Fatal("not removed")
	}
	got := root["spec"].(map[string]any)["ports"].([]any)
	if len(got) != 2 || got[0] != "a" || got[1] != "c" {
		t.Fatalf("ports = %v, want [a c]", got)
	}
}
