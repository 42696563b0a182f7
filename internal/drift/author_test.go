package drift

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

func parse(t *testing.T, text string) *unstructured.Unstructured {
	t.Helper()
	m := map[string]any{}
	if err := yaml.Unmarshal([]byte(strings.ReplaceAll(text, "\t", "  ")), &m); err != nil {
		t.Fatal(err)
	}
	return &unstructured.Unstructured{Object: m}
}

const scaledBefore = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  managedFields:
  - {manager: holdfast, operation: Apply, apiVersion: apps/v1, fieldsType: FieldsV1, time: "2026-11-23T10:00:00Z",
     fieldsV1: {"f:spec": {"f:replicas": {}, "f:paused": {}}}}
spec: {replicas: 2, paused: false}
`

// After a scale by another manager, the API server moved spec.replicas to that manager.
const scaledAfter = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  managedFields:
  - {manager: holdfast, operation: Apply, apiVersion: apps/v1, fieldsType: FieldsV1, time: "2026-11-23T10:00:00Z",
     fieldsV1: {"f:spec": {"f:paused": {}}}}
  - {manager: kube-controller-manager, operation: Update, apiVersion: apps/v1, fieldsType: FieldsV1, time: "2026-11-23T10:00:30Z",
     subresource: status, fieldsV1: {"f:status": {"f:replicas": {}}}}
  - {manager: kubectl, operation: Update, apiVersion: apps/v1, fieldsType: FieldsV1, time: "2026-11-23T10:05:00Z",
     subresource: scale, fieldsV1: {"f:spec": {"f:replicas": {}}}}
spec: {replicas: 5, paused: false}
status: {replicas: 5}
`

// watchDiff is what the watch path reports for a change from before to after: the fields of
// the change the Compactor records on after's snapshot.
func watchDiff(t *testing.T, before, after *unstructured.Unstructured) []FieldChange {
	t.Helper()
	for i, u := range []*unstructured.Unstructured{before, after} {
		if u.GetResourceVersion() == "" {
			u.SetResourceVersion(fmt.Sprint(i + 1))
		}
	}
	if p := compactPair(t, before, after).pending.Load(); p != nil {
		return p.fields
	}
	return nil
}

func TestDiffAndAuthor(t *testing.T) {
	changes := watchDiff(t, parse(t, scaledBefore), parse(t, scaledAfter))
	if len(changes) != 1 || changes[0].Path != ".spec.replicas" || changes[0].Old != "2" || changes[0].New != "5" {
		t.Fatalf("watch diff = %+v, want one change .spec.replicas 2 -> 5", changes)
	}
	a := AuthorOf(parse(t, scaledAfter), changes)
	if a.Manager != "kubectl" || a.Operation != "Update" || a.Subresource != "scale" {
		t.Fatalf("AuthorOf = %+v, want kubectl Update through scale", a)
	}
}

func TestDiffRedactsSecrets(t *testing.T) {
	before := parse(t, `apiVersion: v1
kind: Secret
metadata:
  name: creds
  managedFields:
  - {manager: holdfast, operation: Apply, apiVersion: v1, fieldsType: FieldsV1, fieldsV1: {"f:data": {"f:password": {}}}}
data: {password: c2VjcmV0LW9uZQ==}
`)
	// An Update by another manager takes the field it changes from Holdfast, as the API server does.
	after := parse(t, `apiVersion: v1
kind: Secret
metadata:
  name: creds
  managedFields:
  - {manager: holdfast, operation: Apply, apiVersion: v1, fieldsType: FieldsV1, fieldsV1: {"f:data": {}}}
  - {manager: kubectl-edit, operation: Update, apiVersion: v1, fieldsType: FieldsV1, fieldsV1: {"f:data": {"f:password": {}}}}
data: {password: c2VjcmV0LXR3bw==}
`)
	changes := watchDiff(t, before, after)
	if len(changes) != 1 || changes[0].Path != ".data.password" {
		t.Fatalf("watch diff = %+v, want the password path", changes)
	}
	for _, c := range changes {
		for _, v := range []string{c.Old, c.New} {
			if v != Redacted {
				t.Fatalf("Secret value shown: %q", v)
			}
		}
	}
}

func TestOwnCorrectionIsNoDiff(t *testing.T) {
	// Holdfast re-applied: it owns spec.replicas again, with the declared value.
	changes := watchDiff(t, parse(t, scaledAfter), parse(t, scaledBefore))
	if len(changes) != 0 {
		t.Fatalf("watch diff of Holdfast's own correction = %+v, want none", changes)
	}
}

func TestAuthorTiePrefersSpecOverStatus(t *testing.T) {
	obj := parse(t, `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  managedFields:
  - {manager: kube-controller-manager, operation: Update, apiVersion: apps/v1, fieldsType: FieldsV1, time: "2026-11-23T10:05:00Z",
     subresource: status, fieldsV1: {"f:status": {"f:replicas": {}}}}
  - {manager: kubectl, operation: Update, apiVersion: apps/v1, fieldsType: FieldsV1, time: "2026-11-23T10:05:00Z",
     subresource: scale, fieldsV1: {"f:spec": {"f:replicas": {}}}}
spec: {replicas: 5}
`)
	if a := AuthorOf(obj, nil); a.Manager != "kubectl" {
		t.Fatalf("AuthorOf = %+v, want kubectl", a)
	}
}

func TestAuthorIsWhoHoldsTheChangedField(t *testing.T) {
	// kube-controller-manager's status entry is newer, but kubectl holds spec.replicas; the API
	// server records no time on entries written through the scale subresource.
	obj := parse(t, `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  managedFields:
  - {manager: kubectl, operation: Update, apiVersion: apps/v1, fieldsType: FieldsV1,
     subresource: scale, fieldsV1: {"f:spec": {"f:replicas": {}}}}
  - {manager: kube-controller-manager, operation: Update, apiVersion: apps/v1, fieldsType: FieldsV1, time: "2026-11-23T10:05:01Z",
     subresource: status, fieldsV1: {"f:status": {"f:replicas": {}}}}
spec: {replicas: 5}
status: {replicas: 5}
`)
	a := AuthorOf(obj, []FieldChange{{Path: ".spec.replicas", Old: "2", New: "5"}})
	if a.Manager != "kubectl" || a.Subresource != "scale" {
		t.Fatalf("AuthorOf = %+v, want kubectl through scale", a)
	}
}

// Who put an object back after a drift: the manager now holding a drifted field; not Holdfast,
// whose own write (a correction whose status was never recorded) is no restore by anyone.
func TestRestoredBy(t *testing.T) {
	changed := []FieldChange{{Path: ".data.value"}}
	if a, ok := RestoredBy(configMap(t, "u1", "3", "declared", "", kubectlOwnsValue), changed); !ok || a.Manager != "kubectl-edit" {
		t.Errorf("put back by kubectl-edit: %+v, %v", a, ok)
	}
	if a, ok := RestoredBy(configMap(t, "u1", "3", "declared", ""), changed); ok {
		t.Errorf("Holdfast holds the field again (its own write): restored by %+v", a)
	}
	if _, ok := RestoredBy(configMap(t, "u2", "4", "declared", ""), nil); ok {
		t.Error("re-created by Holdfast's apply: restored by someone else")
	}
	recreated := parse(t, `apiVersion: v1
kind: ConfigMap
metadata:
  name: web
  namespace: demo
  managedFields:
  - {manager: kubectl-create, operation: Update, apiVersion: v1, fieldsType: FieldsV1, time: "2026-11-23T10:05:00Z",
     fieldsV1: {"f:data": {"f:value": {}}}}
data: {value: declared}
`)
	if a, ok := RestoredBy(recreated, nil); !ok || a.Manager != "kubectl-create" {
		t.Errorf("re-created by hand: %+v, %v", a, ok)
	}
}
