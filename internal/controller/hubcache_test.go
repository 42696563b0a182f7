package controller

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// TestIdentityOnly checks what the hub's cache keeps of a ConfigMap or Secret, whichever way
// its informer reads it: the identity and version, never data, annotations or labels.
func TestIdentityOnly(t *testing.T) {
	deleted := metav1.Now()
	full := metav1.ObjectMeta{
		Name: "web", Namespace: "tenant-a", UID: "u-1", ResourceVersion: "42", Generation: 3,
		CreationTimestamp: metav1.Unix(1, 0), DeletionTimestamp: &deleted,
		Labels:          map[string]string{"app": "web"},
		Annotations:     map[string]string{"kubectl.kubernetes.io/last-applied-configuration": `{"data":{"token":"c2VjcmV0"}}`},
		OwnerReferences: []metav1.OwnerReference{{Name: "owner"}}, Finalizers: []string{"f"},
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}},
	}
	kept := metav1.ObjectMeta{Name: "web", Namespace: "tenant-a", UID: "u-1", ResourceVersion: "42",
		CreationTimestamp: metav1.Unix(1, 0), DeletionTimestamp: &deleted}
	cmType := metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}
	secretType := metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"}
	for _, tt := range []struct {
		name    string
		in, out runtime.Object
	}{
		{"a Secret's metadata", &metav1.PartialObjectMetadata{TypeMeta: secretType, ObjectMeta: full},
			&metav1.PartialObjectMetadata{TypeMeta: secretType, ObjectMeta: kept}},
		{"a ConfigMap's metadata", &metav1.PartialObjectMetadata{TypeMeta: cmType, ObjectMeta: full},
			&metav1.PartialObjectMetadata{TypeMeta: cmType, ObjectMeta: kept}},
		{"a ConfigMap", &corev1.ConfigMap{TypeMeta: cmType, ObjectMeta: full,
			Data: map[string]string{"a": "b"}, BinaryData: map[string][]byte{"c": {1}}, Immutable: new(bool)},
			&corev1.ConfigMap{TypeMeta: cmType, ObjectMeta: kept}},
		{"a Secret", &corev1.Secret{TypeMeta: secretType, ObjectMeta: full, Type: corev1.SecretTypeOpaque,
			Data: map[string][]byte{"token": []byte("secret")}, StringData: map[string]string{"s": "secret"}},
			&corev1.Secret{TypeMeta: secretType, ObjectMeta: kept}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := identityOnly(tt.in.DeepCopyObject())
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.out) {
				t.Errorf("identityOnly =\n%#v\nwant\n%#v", got, tt.out)
			}
		})
	}
}
