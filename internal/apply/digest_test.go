package apply

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"holdfast.dev/holdfast/internal/fieldset"
	"holdfast.dev/holdfast/internal/testsupport"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func mustJSON(t *testing.T, s string) map[string]any {
	t.Helper()
	return testsupport.FromJSON(t, s).Object
}

// unstructuredObj is an object written as JSON in a test table.
type unstructuredObj struct{ json string }

func (o *unstructuredObj) get(t *testing.T) *unstructured.Unstructured {
	t.Helper()
	return testsupport.FromJSON(t, o.json)
}

func entry(manager string, op metav1.ManagedFieldsOperationType, fields string) metav1.ManagedFieldsEntry {
	return testsupport.ManagedFieldsEntry(manager, op, "apps/v1", fields)
}

func TestDesiredDigestIsCanonical(t *testing.T) {
	a := mustJSON(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","labels":{"x":"1","y":"2"}},"data":{"k":"v"}}`)
	b := mustJSON(t, `{"data":{"k":"v"},"metadata":{"labels":{"y":"2","x":"1"},"name":"a"},"kind":"ConfigMap","apiVersion":"v1"}`)
	da, _ := DesiredDigest(&unstructured.Unstructured{Object: a})
	db, _ := DesiredDigest(&unstructured.Unstructured{Object: b})
	if da != db || len(da) != 2*fieldset.ObjectDigestSize {
		t.Errorf("digests differ or malformed: %s %s", da, db)
	}
}
