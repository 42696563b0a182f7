package testsupport

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// FromJSON decodes an object written as JSON in a test table; it fails the test if it cannot.
func FromJSON(t testing.TB, s string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON([]byte(s)); err != nil {
		t.Fatalf("decoding %s: %v", s, err)
	}
	return u
}

// Object is an object of apiVersion and kind named name, in namespace unless that is "", with
// data as its data unless that is nil.
func Object(apiVersion, kind, namespace, name string, data map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind,
		"metadata": map[string]any{"name": name}}}
	if namespace != "" {
		u.SetNamespace(namespace)
	}
	if data != nil {
		u.Object["data"] = data
	}
	return u
}

// ManagedFieldsEntry is a managedFields entry of manager, recorded at apiVersion, holding the
// field set written as FieldsV1 JSON.
func ManagedFieldsEntry(manager string, op metav1.ManagedFieldsOperationType, apiVersion, fieldsV1 string) metav1.ManagedFieldsEntry {
	f := &metav1.FieldsV1{}
	f.SetRawString(fieldsV1)
	return metav1.ManagedFieldsEntry{Manager: manager, Operation: op, APIVersion: apiVersion, FieldsType: "FieldsV1", FieldsV1: f}
}
