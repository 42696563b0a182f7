package drift

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func newObject(content map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: content}
}

func TestCompare(t *testing.T) {
	desired := newObject(map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "labels": map[string]any{"app": "web"}},
		"spec": map[string]any{"replicas": int64(2), "template": map[string]any{"spec": map[string]any{
			"containers": []any{map[string]any{"name": "app", "image": "nginx:1"}}}}},
	})
	live := newObject(map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "uid": "x", "labels": map[string]any{"app": "web", "extra": "1"}},
		"spec": map[string]any{"replicas": float64(2), "progressDeadlineSeconds": int64(600), "template": map[string]any{"spec": map[string]any{
			"containers": []any{map[string]any{"name": "app", "image": "nginx:2", "imagePullPolicy": "Always"}}}}},
		"status": map[string]any{"replicas": int64(2)},
	})
	got := Compare(desired, live)
	if len(got) != 1 || got[0].Path != `.spec.template.spec.containers[name="app"].image` || got[0].Old != `"nginx:1"` || got[0].New != `"nginx:2"` {
		t.Fatalf("Compare = %+v, want only the image change", got)
	}
	if w := Without(got, []string{"/spec/template/spec/containers/*/image"}); len(w) != 0 {
		t.Fatalf("Without = %+v, want nothing", w)
	}
	if w := Without(got, []string{"/spec/replicas"}); len(w) != 1 {
		t.Fatalf("Without an unrelated pointer = %+v, want the change kept", w)
	}
}

func TestCompareRedactsSecrets(t *testing.T) {
	desired := newObject(map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "s"},
		"data": map[string]any{"password": "c2VjcmV0LTE="}})
	live := newObject(map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "s"},
		"data": map[string]any{"password": "c2VjcmV0LTI="}})
	got := Compare(desired, live)
	if len(got) != 1 || got[0].Path != ".data.password" {
		t.Fatalf("Compare = %+v, want the password change", got)
	}
	for _, f := range got {
		if strings.Contains(f.Old+f.New, "c2VjcmV0") || f.Old != Redacted || f.New != Redacted {
			t.Fatalf("Secret value shown: %+v", f)
		}
	}
}
