package render

import (
	"context"
	"strings"

	chart "helm.sh/helm/v4/pkg/chart/v2"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Cluster is what templates may use about the target cluster, as
// {{ .Cluster.Name }}, {{ .Cluster.Labels.region }} and so on.
type Cluster struct {
	// Name is the Cluster object's name.
	Name string
	// Namespace is the Cluster object's namespace on the hub.
	Namespace string
	// Labels are the Cluster object's labels.
	Labels map[string]string
	// Annotations are the Cluster object's annotations.
	Annotations map[string]string
}

// Request is one service rendered for one cluster.
type Request struct {
	// Service is the service's name; it appears in every error message and is
	// the default Helm release name.
	Service string
	// Cluster is the target cluster.
	Cluster Cluster
	// TargetNamespace is the service's target namespace, "" if none. It is the
	// Helm release namespace; other objects keep the namespace they declare.
	TargetNamespace string
	// KubeVersion is the target cluster's Kubernetes version (e.g. "v1.35.2"),
	// used by Helm for .Capabilities.KubeVersion and a chart's kubeVersion
	// constraint. "" means DefaultKubeVersion.
	KubeVersion string

	// TemplateValues are the ServiceTemplate's default values and
	// ServiceValues the service's overrides: YAML maps, each first rendered as
	// a Go template with {{ .Cluster }}, {{ .Service }} and
	// {{ .TargetNamespace }}, then deep-merged, the service winning. A key set
	// to null in ServiceValues removes the default.
	TemplateValues, ServiceValues string
	// TemplateValuesFrom and ServiceValuesFrom say where the values texts were
	// read from when that was not the ServiceTemplate's or the service's spec
	// (a Secret, say); the zero value means the spec. Like Limits they change
	// only what a failed render says, so they are left out of JSON.
	TemplateValuesFrom, ServiceValuesFrom ValuesOrigin `json:"-"`

	// Source is what to render.
	Source Source

	// Overrides are the service's overrides that select the cluster, in order: their values
	// merged over ServiceValues, their patches applied to the rendered objects (Override).
	Overrides []Override `json:",omitempty"`

	// Limits bound the render; zero fields mean the defaults. They are left
	// out of JSON: they do not change what a render that succeeds returns, so
	// they are not part of a rendering's inputs (package rendercache hashes
	// the Request as JSON).
	Limits Limits `json:"-"`
}

// ValuesOrigin says where a values text was read from.
type ValuesOrigin struct {
	// Origin names it in messages, e.g. `Secret team-a/web-values key
	// "values.yaml"`; "" keeps "ServiceTemplate values" or "service values".
	Origin string
	// Sensitive marks a text read from a Secret (see Document.Sensitive).
	Sensitive bool
}

// Source is the service's source. Exactly one of Inline, Documents,
// Kustomize and Helm is set.
type Source struct {
	// Inline is multi-document YAML.
	Inline string
	// Documents are manifests the caller read from ConfigMaps or Secrets, in
	// the order they are declared.
	Documents []Document
	// Kustomize is a Kustomize overlay held in memory.
	Kustomize *Kustomize
	// Helm is a chart in an HTTP repository or an OCI registry.
	Helm *Helm

	// GoTemplate makes the manifest text (Inline, Documents, Kustomize files)
	// a Go template rendered with {{ .Cluster }}, {{ .Values }},
	// {{ .Service }} and {{ .TargetNamespace }} before it is parsed. It is off
	// by default so that manifests containing "{{" (Prometheus rules, Argo
	// workflows, Helm charts stored as ConfigMaps) pass untouched. Helm
	// charts are always rendered by Helm and ignore it.
	GoTemplate bool
}

// Document is one manifest file read from a ConfigMap or Secret key. It may
// hold several YAML documents.
type Document struct {
	// Origin names where the content came from, for messages, e.g.
	// `ConfigMap team-a/web key "deploy.yaml"`.
	Origin string
	// Content is the manifest text.
	Content []byte
	// Sensitive marks content read from a Secret, whatever kinds it declares:
	// an error about it names Origin and the line, and never quotes it, nor
	// passes on a parser's or template engine's message, which may. Like
	// Request.Limits it changes only what a failed render says, so it is left
	// out of JSON.
	Sensitive bool `json:"-"`
}

// Kustomize is a Kustomize overlay held in memory. Remote resources (git or
// HTTP URLs) and plugins are refused: everything must be in Files.
type Kustomize struct {
	// Files maps a slash-separated relative path to its content, e.g.
	// "base/kustomization.yaml" -> "...".
	Files map[string][]byte
	// Path is the directory to build, relative to the root of Files;
	// "" means ".".
	Path string
	// SensitiveFiles marks the Files (by the same names) read from a Secret
	// (see Document.Sensitive). An error about such a file names it and quotes
	// nothing of it; since kustomize's own messages and its output may quote
	// any file, those are withheld too when one file is sensitive. Left out of
	// JSON, like Document.Sensitive.
	SensitiveFiles map[string]bool `json:"-"`
}

// Helm is a Helm chart in an HTTP(S) chart repository or an OCI registry.
type Helm struct {
	// Chart is the chart name in the repository.
	Chart string
	// Version is an exact chart version, a semver range such as "1.x" or
	// ">=1.2 <2", or "" for the latest stable version.
	Version string
	// RepoURL is http(s)://... for a chart repository (index.yaml) or
	// oci://host/path for a registry, in which the chart is host/path/<Chart>.
	// It must not contain credentials: use Username and Password.
	RepoURL string
	// ReleaseName is the Helm release name; "" means Request.Service.
	ReleaseName string
	// IncludeCRDs renders the chart's crds/ directory first. Callers set it
	// unless the user opted out.
	IncludeCRDs bool
	// InsecureSkipTLSVerify skips TLS verification of the repository.
	InsecureSkipTLSVerify bool
	// PlainHTTP talks plain HTTP to an OCI registry (loopback tests and demos).
	PlainHTTP bool
	// Username and Password are optional basic-auth credentials. They are never
	// logged, put in errors or used as a cache key.
	Username, Password string
	// Artifact, when set, is where the chart is instead of RepoURL and Chart:
	// a chart directory at Artifact.Path inside a tar.gz artifact pinned by
	// digest (a Flux source's artifact or an OCI artifact).
	Artifact *Artifact `json:",omitempty"`
}

// Artifact is a tar.gz archive of files pinned by its digest: a Flux
// source's artifact (http(s)://, Digest the tarball's) or an OCI artifact
// (oci://host/repository, Digest the manifest's). A download whose digest is
// not Digest is refused.
type Artifact struct {
	// URL is the archive's http(s):// URL or the oci:// repository.
	URL string
	// Digest is "sha256:<hex>".
	Digest string
	// Path is the directory inside the archive that is used; "" is the root.
	Path string
	// PlainHTTP and InsecureSkipTLSVerify are as for Helm, for OCI registries.
	PlainHTTP, InsecureSkipTLSVerify bool
	// Username and Password are optional registry credentials. They are never
	// logged, put in errors or used as a cache key.
	Username, Password string `json:"-"`
}

// ArtifactRef names an artifact for messages ("artifact <url>@<digest>"),
// without credentials.
func ArtifactRef(a Artifact) string {
	u := a.URL
	if before, _, ok := strings.Cut(u, "?"); ok {
		u = before
	}
	return "artifact " + u + "@" + a.Digest
}

// Result is the rendered service.
type Result struct {
	// Objects are the rendered objects in a deterministic order: as declared
	// for manifests, `kustomize build`'s order for Kustomize, Helm's install
	// order for charts. The apply step still puts CRDs and Namespaces first.
	Objects []*unstructured.Unstructured
	// Digest is "sha256:<hex>" over the canonical JSON of Objects, in order.
	// Equal digests mean equal rendered sets.
	Digest string
	// ChartVersion is the chart version Helm rendered, "" for other sources;
	// useful when Helm.Version is a range.
	ChartVersion string
}

// ChartSource fetches Helm charts. Render stays pure given a ChartSource;
// package render/chartsource provides one for HTTP repositories and OCI registries.
//
// Load must return a chart the caller may modify (Helm's dependency
// processing does), and errors as *Error with Reason ChartNotFound,
// ChartFetchFailed or InvalidSource where it can; any other error is treated
// as ChartFetchFailed.
type ChartSource interface {
	Load(ctx context.Context, h Helm) (*chart.Chart, error)
}
