package fieldset

import (
	"encoding/json"
	"strings"
	"testing"

	"holdfast.dev/holdfast/internal/testsupport"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

func mustSet(t *testing.T, fieldsV1 string) *fieldpath.Set {
	t.Helper()
	if fieldsV1 == "" {
		return &fieldpath.Set{}
	}
	s, err := ParseFieldSet(fieldsV1)
	if err != nil {
		t.Fatalf("parsing %s: %v", fieldsV1, err)
	}
	return s
}

func mustJSON(t *testing.T, s string) map[string]any {
	t.Helper()
	return testsupport.FromJSON(t, s).Object
}

// A Deployment as the API server returns it: defaulted fields, a sidecar another manager added.
const deploymentJSON = `{
 "apiVersion": "apps/v1", "kind": "Deployment",
 "metadata": {"name": "web", "namespace": "ns", "labels": {"app": "web", "team": "a"},
   "annotations": {"injected": "yes"}, "finalizers": ["example.com/keep", "other/keep"]},
 "spec": {"replicas": 3, "revisionHistoryLimit": 10,
  "template": {"spec": {
   "containers": [
    {"name": "sidecar", "image": "proxy:1"},
    {"name": "app", "image": "web:1", "imagePullPolicy": "IfNotPresent",
     "args": ["--port", "8080"],
     "ports": [{"containerPort": 8080, "protocol": "TCP"}, {"containerPort": 9090, "protocol": "UDP"}]}
   ],
   "nodeSelector": {"disk": "ssd", "zone": "z1"}}}},
 "status": {"replicas": 3}
}`

func TestOwnedValues(t *testing.T) {
	content := mustJSON(t, deploymentJSON)
	tests := []struct {
		name   string
		owned  string
		others string
		want   []string // "path=json" or "path absent"
	}{{
		name:  "field names",
		owned: `{"f:spec":{"f:replicas":{}},"f:metadata":{"f:labels":{"f:app":{}}}}`,
		want:  []string{`.metadata.labels.app="web"`, `.spec.replicas=3`},
	}, {
		name:  "associative list key, with the item itself owned",
		owned: `{"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"app\"}":{".":{},"f:name":{},"f:image":{}}}}}}}`,
		want: []string{
			`.spec.template.spec.containers[name="app"].image="web:1"`,
			`.spec.template.spec.containers[name="app"].name="app"`,
		},
	}, {
		name:  "compound key with a number",
		owned: `{"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"app\"}":{"f:ports":{"k:{\"containerPort\":9090,\"protocol\":\"UDP\"}":{".":{},"f:containerPort":{}}}}}}}}}`,
		want:  []string{`.spec.template.spec.containers[name="app"].ports[containerPort=9090,protocol="UDP"].containerPort=9090`},
	}, {
		name:  "set value",
		owned: `{"f:metadata":{"f:finalizers":{"v:\"example.com/keep\"":{}, "v:\"gone/keep\"":{}}}}`,
		want:  []string{`.metadata.finalizers[="example.com/keep"]="example.com/keep"`, `.metadata.finalizers[="gone/keep"] absent`},
	}, {
		name:  "index into an atomic list",
		owned: `{"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"app\"}":{"f:args":{"i:1":{}}}}}}}}`,
		want:  []string{`.spec.template.spec.containers[name="app"].args[1]="8080"`},
	}, {
		name:  "atomic value is one leaf",
		owned: `{"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"app\"}":{"f:args":{}}}}}}}`,
		want:  []string{`.spec.template.spec.containers[name="app"].args=["--port","8080"]`},
	}, {
		name:  "missing field, missing item, wrong type",
		owned: `{"f:spec":{"f:paused":{},"f:replicas":{"f:deep":{}},"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"gone\"}":{"f:image":{}}}}}}}`,
		want: []string{
			`.spec.paused absent`,
			`.spec.replicas.deep absent`,
			`.spec.template.spec.containers[name="gone"].image absent`,
		},
	}, {
		name:   "map leaf without the keys other managers own",
		owned:  `{"f:spec":{"f:template":{"f:spec":{"f:nodeSelector":{}}}}}`,
		others: `{"f:spec":{"f:template":{"f:spec":{"f:nodeSelector":{"f:zone":{}}}}}}`,
		want:   []string{`.spec.template.spec.nodeSelector={"disk":"ssd"}`},
	}, {
		name:  "nothing owned",
		owned: `{}`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ownedValues(content, mustSet(t, tt.owned), mustSet(t, tt.others))
			var lines []string
			for _, f := range got {
				if !f.Present {
					lines = append(lines, f.Path+" absent")
					continue
				}
				b, _ := json.Marshal(f.Value)
				lines = append(lines, f.Path+"="+string(b))
			}
			if strings.Join(lines, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// withManagedFields returns the Deployment with the given managedFields entries.
func withManagedFields(t *testing.T, content map[string]any, entries ...metav1.ManagedFieldsEntry) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{Object: content}
	u.SetManagedFields(entries)
	return u
}

func entry(manager string, op metav1.ManagedFieldsOperationType, fields string) metav1.ManagedFieldsEntry {
	return testsupport.ManagedFieldsEntry(manager, op, "apps/v1", fields)
}

const ownedByHoldfast = `{"f:metadata":{"f:labels":{"f:app":{},"f:team":{}}},"f:spec":{"f:replicas":{},"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"app\"}":{".":{},"f:name":{},"f:image":{}}}}}}}`

func TestOwnedDigest(t *testing.T) {
	base := func() *unstructured.Unstructured {
		return withManagedFields(t, mustJSON(t, deploymentJSON),
			entry(FieldManager, metav1.ManagedFieldsOperationApply, ownedByHoldfast),
			entry("sidecar-injector", metav1.ManagedFieldsOperationUpdate, `{"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"sidecar\"}":{".":{},"f:name":{},"f:image":{}}}}}}}`))
	}
	digest := func(u *unstructured.Unstructured) string {
		t.Helper()
		d, err := OwnedDigest(u, FieldManager)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	want := digest(base())
	if want == "" {
		t.Fatal("empty digest")
	}

	same := map[string]func(u *unstructured.Unstructured){
		"status":          func(u *unstructured.Unstructured) { u.Object["status"] = map[string]any{"replicas": int64(1)} },
		"resourceVersion": func(u *unstructured.Unstructured) { u.SetResourceVersion("999"); u.SetGeneration(7) },
		"other annotation": func(u *unstructured.Unstructured) {
			u.SetAnnotations(map[string]string{"controller": "was-here"})
		},
		"other container changed": func(u *unstructured.Unstructured) {
			cs, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
			cs[0].(map[string]any)["image"] = "proxy:2"
			_ = unstructured.SetNestedSlice(u.Object, cs, "spec", "template", "spec", "containers")
		},
		"containers reordered": func(u *unstructured.Unstructured) {
			cs, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
			cs[0], cs[1] = cs[1], cs[0]
			_ = unstructured.SetNestedSlice(u.Object, cs, "spec", "template", "spec", "containers")
		},
		"defaulted field": func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(u.Object, int64(5), "spec", "progressDeadlineSeconds")
		},
	}
	for name, mutate := range same {
		u := base()
		mutate(u)
		if got := digest(u); got != want {
			t.Errorf("%s changed the digest", name)
		}
	}

	changed := map[string]func(u *unstructured.Unstructured){
		"replicas": func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(u.Object, int64(5), "spec", "replicas")
		},
		"label removed": func(u *unstructured.Unstructured) { u.SetLabels(map[string]string{"app": "web"}) },
		"our image": func(u *unstructured.Unstructured) {
			cs, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
			cs[1].(map[string]any)["image"] = "web:2"
			_ = unstructured.SetNestedSlice(u.Object, cs, "spec", "template", "spec", "containers")
		},
		"field changed hands": func(u *unstructured.Unstructured) {
			u.SetManagedFields([]metav1.ManagedFieldsEntry{
				entry(FieldManager, metav1.ManagedFieldsOperationApply, strings.Replace(ownedByHoldfast, `"f:replicas":{},`, "", 1)),
				entry("kubectl", metav1.ManagedFieldsOperationUpdate, `{"f:spec":{"f:replicas":{}}}`),
			})
		},
	}
	for name, mutate := range changed {
		u := base()
		mutate(u)
		if got := digest(u); got == want {
			t.Errorf("%s did not change the digest", name)
		}
	}

	u := base()
	u.SetManagedFields(nil)
	if got := digest(u); got != "" {
		t.Errorf("digest without our entry = %q, want empty", got)
	}
}
