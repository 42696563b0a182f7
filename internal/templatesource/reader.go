package templatesource

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

// Reader reads the objects a ServiceTemplate references, in the template's namespace.
type Reader struct {
	// Client reads ConfigMaps' metadata (the manager's cache serves it, and holds nothing else
	// of them): a ConfigMap it does not know is not found.
	Client client.Reader
	// APIReader reads ConfigMaps' data, Secrets, and Flux source objects from the API server,
	// never the cache.
	APIReader client.Reader
	// ConfigMaps keeps the ConfigMaps read from the API server, so that each version is read
	// once; nil keeps none.
	ConfigMaps *RecentConfigMaps
	// Artifacts downloads artifacts; only templates with spec.artifact need it.
	Artifacts Artifacts
}

// ReadError is a referenced ConfigMap or Secret that could not be read, or that has no key a
// ManifestReference names.
type ReadError struct {
	// Kind is "ConfigMap" or "Secret".
	Kind string
	// Namespace and Name name the object; the namespace is the template's.
	Namespace, Name string
	// Field is the template field that references the object, e.g. "spec.resources".
	Field string
	// Key is the missing key, when the object was read but has no such key; Err is nil then.
	Key string
	// Err is why the object could not be read; apierrors.IsNotFound tells a missing object.
	Err error
}

func (e *ReadError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("%s %s/%s (%s) has no key %q", e.Kind, e.Namespace, e.Name, e.Field, e.Key)
	}
	return fmt.Sprintf("reading %s %s/%s (%s): %v", e.Kind, e.Namespace, e.Name, e.Field, e.Err)
}

// Unwrap returns why the object could not be read.
func (e *ReadError) Unwrap() error { return e.Err }

// NotFound reports whether the object or the key does not exist, which a user must fix, as
// opposed to a read that failed and is worth retrying.
func (e *ReadError) NotFound() bool { return e.Err == nil || apierrors.IsNotFound(e.Err) }

// Data reads the ConfigMap (its data and binary data) or the Secret (its data) that tpl's field
// references by name.
func (r Reader) Data(ctx context.Context, tpl *holdfastv1.ServiceTemplate, kind holdfastv1.ManifestSourceKind, name, field string) (map[string][]byte, error) {
	if kind == holdfastv1.ManifestSourceSecret {
		return r.secretData(ctx, tpl, name, field)
	}
	return r.configMapData(ctx, tpl, name, field)
}

// configMapData reads a ConfigMap's data from the API server, or from r.ConfigMaps if it kept
// the version the cache knows. A ConfigMap the cache does not know is not found: its watch
// brings the template back when it appears.
func (r Reader) configMapData(ctx context.Context, tpl *holdfastv1.ServiceTemplate, name, field string) (map[string][]byte, error) {
	key := client.ObjectKey{Namespace: tpl.Namespace, Name: name}
	meta, err := r.configMapMetadata(ctx, tpl, name, field)
	if err != nil {
		return nil, err
	}
	if data, ok := r.ConfigMaps.get(key, meta.UID, meta.ResourceVersion); ok {
		return data, nil
	}
	cm := &corev1.ConfigMap{}
	if err := r.APIReader.Get(ctx, key, cm); err != nil {
		return nil, &ReadError{Kind: "ConfigMap", Namespace: tpl.Namespace, Name: name, Field: field, Err: err}
	}
	data := make(map[string][]byte, len(cm.Data)+len(cm.BinaryData))
	for k, v := range cm.Data {
		data[k] = []byte(v)
	}
	for k, v := range cm.BinaryData {
		data[k] = v
	}
	r.ConfigMaps.keep(cm, data)
	return data, nil
}

// Exists checks that the ConfigMap or the Secret that tpl's field references by name exists,
// without reading a ConfigMap's data: one the cache knows exists.
func (r Reader) Exists(ctx context.Context, tpl *holdfastv1.ServiceTemplate, kind holdfastv1.ManifestSourceKind, name, field string) error {
	if kind == holdfastv1.ManifestSourceSecret {
		_, err := r.secretData(ctx, tpl, name, field)
		return err
	}
	_, err := r.configMapMetadata(ctx, tpl, name, field)
	return err
}

// configMapMetadata reads a ConfigMap's metadata from the cache.
func (r Reader) configMapMetadata(ctx context.Context, tpl *holdfastv1.ServiceTemplate, name, field string) (*metav1.PartialObjectMetadata, error) {
	meta := &metav1.PartialObjectMetadata{}
	meta.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMap"))
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: tpl.Namespace, Name: name}, meta); err != nil {
		return nil, &ReadError{Kind: "ConfigMap", Namespace: tpl.Namespace, Name: name, Field: field, Err: err}
	}
	return meta, nil
}

func (r Reader) secretData(ctx context.Context, tpl *holdfastv1.ServiceTemplate, name, field string) (map[string][]byte, error) {
	s := &corev1.Secret{}
	if err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: tpl.Namespace, Name: name}, s); err != nil {
		return nil, &ReadError{Kind: "Secret", Namespace: tpl.Namespace, Name: name, Field: field, Err: err}
	}
	return s.Data, nil
}
