package templatesource

import (
	"context"
	"fmt"
	"path"
	"sort"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/render"
)

// Fields of a ServiceTemplate that reference ConfigMaps and Secrets, as ReadError.Field names them.
const (
	FieldResources       = "spec.resources"
	FieldKustomizeFiles  = "spec.kustomize.files"
	FieldHelmCredentials = "spec.helm.credentialsSecretRef"
)

// Source maps tpl to the source package render renders, reading every ConfigMap and Secret it
// references: its chart's credentials, its Kustomize files, or its manifests. An artifact
// source renders what status.artifact pins, never what the source points at now: the
// ServiceTemplate controller moves the pin, and every cluster renders the same digest.
func (r Reader) Source(ctx context.Context, tpl *holdfastv1.ServiceTemplate) (render.Source, error) {
	src := render.Source{GoTemplate: tpl.Spec.Templating == holdfastv1.TemplatingGoTemplate}
	spec := tpl.Spec
	switch {
	case spec.Artifact != nil:
		a, err := r.artifactSource(ctx, tpl)
		if err != nil {
			return src, err
		}
		a.GoTemplate = src.GoTemplate
		src = a
	case spec.Helm != nil:
		h, err := r.Helm(ctx, tpl)
		if err != nil {
			return src, err
		}
		src.Helm = h
	case spec.Kustomize != nil:
		files := map[string][]byte{}
		for _, f := range spec.Kustomize.Files {
			data, err := r.configMapData(ctx, tpl, f.ConfigMap, FieldKustomizeFiles)
			if err != nil {
				return src, err
			}
			for name, content := range data {
				files[path.Join(f.Directory, name)] = content
			}
		}
		src.Kustomize = &render.Kustomize{Files: files, Path: spec.Kustomize.Path}
	case len(spec.Resources) > 0:
		for _, ref := range spec.Resources {
			docs, err := r.documents(ctx, tpl, ref)
			if err != nil {
				return src, err
			}
			src.Documents = append(src.Documents, docs...)
		}
	default:
		src.Inline = spec.Inline
	}
	return src, nil
}

// Helm maps tpl's spec.helm to the chart reference package render uses, with the username and
// password read from the Secret spec.helm.credentialsSecretRef names, if any.
func (r Reader) Helm(ctx context.Context, tpl *holdfastv1.ServiceTemplate) (*render.Helm, error) {
	h := Chart(tpl.Spec.Helm)
	if ref := tpl.Spec.Helm.CredentialsSecretRef; ref != nil {
		data, err := r.secretData(ctx, tpl, ref.Name, FieldHelmCredentials)
		if err != nil {
			return nil, err
		}
		h.Username, h.Password = string(data["username"]), string(data["password"])
	}
	return &h, nil
}

// Chart maps a HelmSource to the chart reference package render uses, without credentials:
// the CRDs are included unless the template skips them.
func Chart(h *holdfastv1.HelmSource) render.Helm {
	return render.Helm{
		Chart: h.Chart, Version: h.Version, RepoURL: h.RepoURL, ReleaseName: h.ReleaseName,
		IncludeCRDs: !h.SkipCRDs, InsecureSkipTLSVerify: h.InsecureSkipTLSVerify, PlainHTTP: h.PlainHTTP,
	}
}

// documents reads one ManifestReference: one key, or every key in key order. What is read from
// a Secret is marked Sensitive, whatever it declares, so that no render error quotes it.
func (r Reader) documents(ctx context.Context, tpl *holdfastv1.ServiceTemplate, ref holdfastv1.ManifestReference) ([]render.Document, error) {
	data, err := r.Data(ctx, tpl, ref.Kind, ref.Name, FieldResources)
	if err != nil {
		return nil, err
	}
	document := func(key string) render.Document {
		return render.Document{
			Origin:    fmt.Sprintf("%s %s/%s key %q", ref.Kind, tpl.Namespace, ref.Name, key),
			Content:   data[key],
			Sensitive: ref.Kind == holdfastv1.ManifestSourceSecret,
		}
	}
	if ref.Key != "" {
		if _, ok := data[ref.Key]; !ok {
			return nil, &ReadError{Kind: string(ref.Kind), Namespace: tpl.Namespace, Name: ref.Name, Field: FieldResources, Key: ref.Key}
		}
		return []render.Document{document(ref.Key)}, nil
	}
	keys := make([]string, 0, len(data))
	for k := range data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	docs := make([]render.Document, 0, len(keys))
	for _, k := range keys {
		docs = append(docs, document(k))
	}
	return docs, nil
}
