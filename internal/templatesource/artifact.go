package templatesource

import (
	"context"
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/decrypt"
	"holdfast.dev/holdfast/internal/render"
)

// FieldArtifactCredentials is the field of a ServiceTemplate that names its OCI credentials.
const FieldArtifactCredentials = "spec.artifact.credentialsSecretRef"

// DefaultFluxAPIVersion is the API version of a Flux source when spec.artifact.sourceRef names
// none: Flux 2.6 and later serve GitRepository, OCIRepository and Bucket as v1.
const DefaultFluxAPIVersion = "source.toolkit.fluxcd.io/v1"

// Artifacts resolves and downloads artifacts; package chartsource's Source is one. Downloads
// are checked against the digest they are pinned to.
type Artifacts interface {
	// ResolveArtifact returns the manifest digest an oci:// URL's tag points at.
	ResolveArtifact(ctx context.Context, a render.Artifact) (string, error)
	// ArtifactFiles returns the files of the artifact a.Digest pins, by path from its root.
	ArtifactFiles(ctx context.Context, a render.Artifact) (map[string][]byte, error)
}

var errNoArtifacts = errors.New("templatesource: this controller was set up without an artifact source")

// ResolveArtifact finds the artifact tpl's spec.artifact points at now: the status.artifact of
// the Flux source it names (read from the API server, so the controller needs no informer for
// Flux kinds and works when Flux is not installed), or the digest an OCI tag points at. The
// errors are *render.Error: ArtifactSourceNotFound for a Flux object or kind that does not
// exist, ArtifactNotReady for a Flux source without an artifact yet, or what the registry
// answered.
func (r Reader) ResolveArtifact(ctx context.Context, tpl *holdfastv1.ServiceTemplate) (holdfastv1.ArtifactStatus, error) {
	spec := tpl.Spec.Artifact
	if ref := spec.SourceRef; ref != nil {
		return r.fluxArtifact(ctx, tpl, *ref)
	}
	if r.Artifacts == nil {
		return holdfastv1.ArtifactStatus{}, errNoArtifacts
	}
	a, err := r.artifact(ctx, tpl, holdfastv1.ArtifactStatus{URL: spec.URL})
	if err != nil {
		return holdfastv1.ArtifactStatus{}, err
	}
	digest, err := r.Artifacts.ResolveArtifact(ctx, a)
	if err != nil {
		return holdfastv1.ArtifactStatus{}, err
	}
	revision := digest
	if tag := ociTag(spec.URL); tag != "" {
		revision = tag + "@" + digest
	}
	return holdfastv1.ArtifactStatus{URL: spec.URL, Revision: revision, Digest: digest}, nil
}

// fluxArtifact reads status.artifact of a Flux source object.
func (r Reader) fluxArtifact(ctx context.Context, tpl *holdfastv1.ServiceTemplate, ref holdfastv1.FluxSourceReference) (holdfastv1.ArtifactStatus, error) {
	apiVersion := ref.APIVersion
	if apiVersion == "" {
		apiVersion = DefaultFluxAPIVersion
	}
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return holdfastv1.ArtifactStatus{}, &render.Error{Reason: render.ReasonInvalidSource, Object: "spec.artifact.sourceRef",
			Message: fmt.Sprintf("apiVersion %q is not valid: %v", apiVersion, err)}
	}
	gvk := gv.WithKind(string(ref.Kind))
	object := fmt.Sprintf("%s %s/%s", ref.Kind, tpl.Namespace, ref.Name)
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	if err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: tpl.Namespace, Name: ref.Name}, u); err != nil {
		switch {
		case meta.IsNoMatchError(err):
			return holdfastv1.ArtifactStatus{}, &render.Error{Reason: holdfastv1.ArtifactSourceNotFoundReason, Object: object, Err: err, Message: fmt.Sprintf(
				"the hub does not serve %s in %s: install Flux's source-controller on the hub, or fix spec.artifact.sourceRef", ref.Kind, apiVersion)}
		case apierrors.IsNotFound(err):
			return holdfastv1.ArtifactStatus{}, &render.Error{Reason: holdfastv1.ArtifactSourceNotFoundReason, Object: object, Err: err,
				Message: "not found: create it or fix spec.artifact.sourceRef"}
		default:
			return holdfastv1.ArtifactStatus{}, &render.Error{Reason: render.ReasonArtifactFetchFailed, Object: object, Err: err,
				Message: "cannot be read: " + err.Error()}
		}
	}
	url, _, _ := unstructured.NestedString(u.Object, "status", "artifact", "url")
	revision, _, _ := unstructured.NestedString(u.Object, "status", "artifact", "revision")
	digest, _, _ := unstructured.NestedString(u.Object, "status", "artifact", "digest")
	if digest == "" {
		// Flux's v1beta2 APIs published the tarball's sha256 as checksum.
		if sum, _, _ := unstructured.NestedString(u.Object, "status", "artifact", "checksum"); sum != "" {
			digest = "sha256:" + sum
		}
	}
	if url == "" || digest == "" {
		return holdfastv1.ArtifactStatus{}, &render.Error{Reason: holdfastv1.ArtifactNotReadyReason, Object: object,
			Message: "has no artifact yet (status.artifact with url and digest); it is read again at spec.artifact.interval"}
	}
	return holdfastv1.ArtifactStatus{URL: url, Revision: revision, Digest: digest}, nil
}

// ociTag returns the tag of an oci:// URL, "" when it names a digest or no tag.
func ociTag(url string) string {
	rest := strings.TrimPrefix(url, "oci://")
	if strings.Contains(rest, "@") {
		return ""
	}
	last := rest[strings.LastIndex(rest, "/")+1:]
	if _, tag, ok := strings.Cut(last, ":"); ok {
		return tag
	}
	return ""
}

// artifact is what tpl's status.artifact pins, as package render names an artifact, with the
// credentials read from the Secret spec.artifact.credentialsSecretRef names.
func (r Reader) artifact(ctx context.Context, tpl *holdfastv1.ServiceTemplate, pinned holdfastv1.ArtifactStatus) (render.Artifact, error) {
	spec := tpl.Spec.Artifact
	a := render.Artifact{URL: pinned.URL, Digest: pinned.Digest, Path: spec.Path,
		PlainHTTP: spec.PlainHTTP, InsecureSkipTLSVerify: spec.InsecureSkipTLSVerify}
	if ref := spec.CredentialsSecretRef; ref != nil {
		data, err := r.secretData(ctx, tpl, ref.Name, FieldArtifactCredentials)
		if err != nil {
			return a, err
		}
		a.Username, a.Password = string(data["username"]), string(data["password"])
	}
	return a, nil
}

// artifactSource downloads what tpl's status.artifact pins and maps it to a render source.
func (r Reader) artifactSource(ctx context.Context, tpl *holdfastv1.ServiceTemplate) (render.Source, error) {
	if tpl.Status.Artifact == nil {
		return render.Source{}, &render.Error{Reason: holdfastv1.ArtifactNotReadyReason,
			Object:  fmt.Sprintf("ServiceTemplate %s/%s", tpl.Namespace, tpl.Name),
			Message: "spec.artifact is not resolved yet; the ServiceTemplate controller pins it in status.artifact (see its SourceAvailable condition)"}
	}
	if r.Artifacts == nil {
		return render.Source{}, errNoArtifacts
	}
	a, err := r.artifact(ctx, tpl, *tpl.Status.Artifact)
	if err != nil {
		return render.Source{}, err
	}
	files, err := r.Artifacts.ArtifactFiles(ctx, a)
	if err != nil {
		return render.Source{}, err
	}
	keys, err := r.decryptionKeys(ctx, tpl)
	if err != nil {
		return render.Source{}, err
	}
	return ArtifactSource(a, tpl.Spec.Artifact, files, keys)
}

// ArtifactSource maps the files of artifact a to a render source, in the format spec asks for
// or, when it names none, the one the files at a.Path show: a Chart.yaml makes a Helm chart, a
// kustomization a Kustomize overlay (built from every file of the artifact, so that it may
// reach bases outside the path), anything else the *.yaml, *.yml and *.json files under the
// path, in path order.
//
// The YAML and JSON files it renders that are encrypted with SOPS are decrypted with keys (nil
// when the template has no spec.decryption, which makes such a file an error), in memory, and
// marked sensitive: a manifest Document.Sensitive, a Kustomize file in SensitiveFiles, as what
// is read from a Secret is. A chart's files are not decrypted; an encrypted one is an error.
func ArtifactSource(a render.Artifact, spec *holdfastv1.ArtifactSource, files map[string][]byte, keys *decrypt.Keys) (render.Source, error) {
	ref := render.ArtifactRef(a)
	dir := path.Clean("/" + a.Path)
	under := map[string]bool{}
	var names, all []string
	for name := range files {
		all = append(all, name)
		if rel, ok := strings.CutPrefix("/"+name, strings.TrimSuffix(dir, "/")+"/"); ok {
			under[rel] = true
			names = append(names, rel)
		}
	}
	sort.Strings(names)
	sort.Strings(all)
	if len(names) == 0 {
		return render.Source{}, &render.Error{Reason: render.ReasonInvalidArtifact, Object: ref,
			Message: fmt.Sprintf("the artifact has no files under %q; fix spec.artifact.path", strings.TrimPrefix(dir, "/"))}
	}
	format := spec.Format
	if format == "" {
		switch {
		case under["Chart.yaml"]:
			format = holdfastv1.ArtifactHelm
		case under["kustomization.yaml"] || under["kustomization.yml"] || under["Kustomization"]:
			format = holdfastv1.ArtifactKustomize
		default:
			format = holdfastv1.ArtifactManifests
		}
	}
	full := func(rel string) string { return strings.TrimPrefix(path.Join(dir, rel), "/") }
	switch format {
	case holdfastv1.ArtifactHelm:
		if !under["Chart.yaml"] {
			return render.Source{}, &render.Error{Reason: render.ReasonInvalidArtifact, Object: ref, Message: "format Helm, but there is no Chart.yaml at the path"}
		}
		for _, name := range names {
			if manifestFile(name) && decrypt.Encrypted(name, files[full(name)]) {
				return render.Source{}, &render.Error{Reason: holdfastv1.DecryptionFailedReason, Object: fmt.Sprintf("%s file %q", ref, full(name)),
					Message: "is encrypted with SOPS, and a chart's files are not decrypted: keep encrypted manifests in a Manifests or Kustomize artifact"}
			}
		}
		return render.Source{Helm: &render.Helm{Artifact: &a, ReleaseName: spec.ReleaseName, IncludeCRDs: true}}, nil
	case holdfastv1.ArtifactKustomize:
		o, err := open(ref, files, all, keys)
		if err != nil {
			return render.Source{}, err
		}
		return render.Source{Kustomize: &render.Kustomize{Files: o.files, Path: strings.TrimPrefix(dir, "/"), SensitiveFiles: o.decrypted}}, nil
	}
	var manifests []string
	for _, name := range names {
		if manifestFile(name) {
			manifests = append(manifests, full(name))
		}
	}
	o, err := open(ref, files, manifests, keys)
	if err != nil {
		return render.Source{}, err
	}
	src := render.Source{}
	for _, name := range manifests {
		src.Documents = append(src.Documents, render.Document{Origin: fmt.Sprintf("%s file %q", ref, name), Content: o.files[name], Sensitive: o.decrypted[name]})
	}
	if len(src.Documents) == 0 {
		return render.Source{}, &render.Error{Reason: render.ReasonInvalidArtifact, Object: ref,
			Message: fmt.Sprintf("the artifact has no *.yaml, *.yml or *.json files under %q; fix spec.artifact.path or format", strings.TrimPrefix(dir, "/"))}
	}
	return src, nil
}
