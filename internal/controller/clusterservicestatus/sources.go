package clusterservicestatus

import (
	"context"
	"fmt"
	"path"
	"sort"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/render"
)

// sourceError is a service that cannot be rendered because of the hub's objects: a missing
// template or a missing ConfigMap or Secret. Reason is a condition reason; the message names
// the service, the object and what to fix.
type sourceError struct {
	reason    string
	message   string
	transient bool
}

func (e *sourceError) Error() string { return e.message }

// renderRequest builds the render request for one service on one cluster, reading the template
// and what it references from the hub. Secrets are read from the API server, never cached.
func (r *Reconciler) renderRequest(ctx context.Context, svc holdfastv1.Service, cluster *holdfastv1.Cluster) (render.Request, error) {
	req := render.Request{
		Service: svc.Name,
		Cluster: render.Cluster{
			Name: cluster.Name, Namespace: cluster.Namespace,
			Labels: cluster.Labels, Annotations: cluster.Annotations,
		},
		TargetNamespace: svc.Namespace,
		KubeVersion:     cluster.Status.Version,
		ServiceValues:   svc.Values,
	}
	tkey := types.NamespacedName{Namespace: svc.Template.Namespace, Name: svc.Template.Name}
	tpl := &holdfastv1.ServiceTemplate{}
	if err := r.Client.Get(ctx, tkey, tpl); err != nil {
		if apierrors.IsNotFound(err) {
			return req, &sourceError{reason: holdfastv1.TemplateNotFoundReason, message: fmt.Sprintf(
				"service %q: ServiceTemplate %s not found: create it or fix spec.services[%s].template", svc.Name, tkey, svc.Name)}
		}
		return req, &sourceError{reason: holdfastv1.SourceUnavailableReason, transient: true,
			message: fmt.Sprintf("service %q: reading ServiceTemplate %s: %v", svc.Name, tkey, err)}
	}
	req.TemplateValues = tpl.Spec.Values
	req.Source.GoTemplate = tpl.Spec.Templating == holdfastv1.TemplatingGoTemplate
	spec := tpl.Spec
	switch {
	case spec.Helm != nil:
		h := spec.Helm
		req.Source.Helm = &render.Helm{
			Chart: h.Chart, Version: h.Version, RepoURL: h.RepoURL, ReleaseName: h.ReleaseName,
			IncludeCRDs: !h.SkipCRDs, InsecureSkipTLSVerify: h.InsecureSkipTLSVerify, PlainHTTP: h.PlainHTTP,
		}
		if h.CredentialsSecretRef != nil {
			data, err := r.secretData(ctx, svc.Name, tpl, h.CredentialsSecretRef.Name, "spec.helm.credentialsSecretRef")
			if err != nil {
				return req, err
			}
			req.Source.Helm.Username, req.Source.Helm.Password = string(data["username"]), string(data["password"])
		}
	case spec.Kustomize != nil:
		files := map[string][]byte{}
		for _, f := range spec.Kustomize.Files {
			data, err := r.configMapData(ctx, svc.Name, tpl, f.ConfigMap, "spec.kustomize.files")
			if err != nil {
				return req, err
			}
			for name, content := range data {
				files[path.Join(f.Directory, name)] = content
			}
		}
		req.Source.Kustomize = &render.Kustomize{Files: files, Path: spec.Kustomize.Path}
	case len(spec.Resources) > 0:
		for _, ref := range spec.Resources {
			docs, err := r.documents(ctx, svc.Name, tpl, ref)
			if err != nil {
				return req, err
			}
			req.Source.Documents = append(req.Source.Documents, docs...)
		}
	default:
		req.Source.Inline = spec.Inline
	}
	return req, nil
}

// documents reads one ManifestReference: one key, or every key in key order.
func (r *Reconciler) documents(ctx context.Context, service string, tpl *holdfastv1.ServiceTemplate, ref holdfastv1.ManifestReference) ([]render.Document, error) {
	var data map[string][]byte
	var err error
	if ref.Kind == holdfastv1.ManifestSourceSecret {
		data, err = r.secretData(ctx, service, tpl, ref.Name, "spec.resources")
	} else {
		data, err = r.configMapData(ctx, service, tpl, ref.Name, "spec.resources")
	}
	if err != nil {
		return nil, err
	}
	origin := func(key string) string {
		return fmt.Sprintf("%s %s/%s key %q", ref.Kind, tpl.Namespace, ref.Name, key)
	}
	if ref.Key != "" {
		content, ok := data[ref.Key]
		if !ok {
			return nil, &sourceError{reason: holdfastv1.SourceNotFoundReason, message: fmt.Sprintf(
				"service %q: %s %s/%s has no key %q (ServiceTemplate %s/%s spec.resources): add the key or fix the reference",
				service, ref.Kind, tpl.Namespace, ref.Name, ref.Key, tpl.Namespace, tpl.Name)}
		}
		return []render.Document{{Origin: origin(ref.Key), Content: content}}, nil
	}
	keys := make([]string, 0, len(data))
	for k := range data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	docs := make([]render.Document, 0, len(keys))
	for _, k := range keys {
		docs = append(docs, render.Document{Origin: origin(k), Content: data[k]})
	}
	return docs, nil
}

func (r *Reconciler) configMapData(ctx context.Context, service string, tpl *holdfastv1.ServiceTemplate, name, field string) (map[string][]byte, error) {
	cm := &corev1.ConfigMap{}
	if err := r.Client.Get(ctx, types.NamespacedName{Namespace: tpl.Namespace, Name: name}, cm); err != nil {
		return nil, missing(err, service, "ConfigMap", tpl, name, field)
	}
	data := make(map[string][]byte, len(cm.Data)+len(cm.BinaryData))
	for k, v := range cm.Data {
		data[k] = []byte(v)
	}
	for k, v := range cm.BinaryData {
		data[k] = v
	}
	return data, nil
}

func (r *Reconciler) secretData(ctx context.Context, service string, tpl *holdfastv1.ServiceTemplate, name, field string) (map[string][]byte, error) {
	s := &corev1.Secret{}
	if err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: tpl.Namespace, Name: name}, s); err != nil {
		return nil, missing(err, service, "Secret", tpl, name, field)
	}
	return s.Data, nil
}

func missing(err error, service, kind string, tpl *holdfastv1.ServiceTemplate, name, field string) error {
	if apierrors.IsNotFound(err) {
		return &sourceError{reason: holdfastv1.SourceNotFoundReason, message: fmt.Sprintf(
			"service %q: %s %s/%s not found (ServiceTemplate %s/%s %s): create it or fix the reference",
			service, kind, tpl.Namespace, name, tpl.Namespace, tpl.Name, field)}
	}
	return &sourceError{reason: holdfastv1.SourceUnavailableReason, transient: true, message: fmt.Sprintf(
		"service %q: reading %s %s/%s: %v", service, kind, tpl.Namespace, name, err)}
}
