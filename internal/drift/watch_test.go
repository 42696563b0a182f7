package drift

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

func obj(t *testing.T, rv, replicas, otherAnnotation string) *unstructured.Unstructured {
	t.Helper()
	text := `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: demo
  resourceVersion: "` + rv + `"
  annotations: {other: "` + otherAnnotation + `"}
  managedFields:
  - manager: holdfast
    operation: Apply
    apiVersion: apps/v1
    fieldsType: FieldsV1
    fieldsV1: {"f:spec": {"f:replicas": {}}}
  - manager: kube-controller-manager
    operation: Update
    apiVersion: apps/v1
    fieldsType: FieldsV1
    fieldsV1: {"f:metadata": {"f:annotations": {"f:other": {}}}}
spec:
  replicas: ` + replicas + `
`
	m := map[string]any{}
	if err := yaml.Unmarshal([]byte(text), &m); err != nil {
		t.Fatal(err)
	}
	return &unstructured.Unstructured{Object: m}
}

func TestOwnedChanged(t *testing.T) {
	cases := []struct {
		name     string
		old, new *unstructured.Unstructured
		want     bool
	}{
		{"resync", obj(t, "1", "2", "a"), obj(t, "1", "2", "a"), false},
		{"another manager's annotation", obj(t, "1", "2", "a"), obj(t, "2", "2", "b"), false},
		{"an owned value", obj(t, "1", "2", "a"), obj(t, "2", "5", "a"), true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := OwnedChanged(c.old, c.new); got != c.want {
				t.Fatalf("OwnedChanged = %v, want %v", got, c.want)
			}
		})
	}
}
