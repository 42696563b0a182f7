package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TemplatingMode says whether manifest text is a Go template.
// +kubebuilder:validation:Enum=None;GoTemplate
type TemplatingMode string

const (
	// TemplatingNone passes manifests through untouched, so text such as Prometheus rules that
	// contains "{{" needs no escaping.
	TemplatingNone TemplatingMode = "None"
	// TemplatingGoTemplate renders manifest text as a Go text/template with .Cluster (name,
	// namespace, labels, annotations) and .Values before parsing it.
	TemplatingGoTemplate TemplatingMode = "GoTemplate"
)

// ManifestSourceKind is the kind of object a ManifestReference reads.
// +kubebuilder:validation:Enum=ConfigMap;Secret
type ManifestSourceKind string

const (
	ManifestSourceConfigMap ManifestSourceKind = "ConfigMap"
	ManifestSourceSecret    ManifestSourceKind = "Secret"
)

// ManifestReference reads manifests from a ConfigMap or Secret in the template's namespace.
type ManifestReference struct {
	// Kind is ConfigMap or Secret.
	Kind ManifestSourceKind `json:"kind"`
	// Name of the ConfigMap or Secret.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// Key to read. When empty, every key is read, in key order.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Key string `json:"key,omitempty"`
}

// KustomizeFiles places the keys of one ConfigMap as files in one directory of the overlay.
// ConfigMap keys cannot hold a "/", so a directory tree is made of one ConfigMap per directory.
type KustomizeFiles struct {
	// ConfigMap, in the template's namespace, whose keys are file names.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	ConfigMap string `json:"configMap"`
	// Directory the files go to, relative to the root; empty is the root.
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:XValidation:rule="!self.startsWith('/') && !self.contains('..')",message="directory must be relative and must not contain '..'"
	// +optional
	Directory string `json:"directory,omitempty"`
}

// KustomizeSource is a Kustomize overlay held in ConfigMaps, rendered with the Kustomize API.
type KustomizeSource struct {
	// Files make up the overlay's file tree.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	// +listType=atomic
	Files []KustomizeFiles `json:"files"`
	// Path of the directory to build, relative to the root; empty is the root.
	// +kubebuilder:validation:MaxLength=512
	// +optional
	Path string `json:"path,omitempty"`
}

// HelmSource is a Helm chart from an HTTP chart repository or an OCI registry.
type HelmSource struct {
	// RepoURL is an http(s):// chart repository or an oci:// registry path.
	// +kubebuilder:validation:Pattern=`^(https?|oci)://`
	// +kubebuilder:validation:MaxLength=2048
	RepoURL string `json:"repoURL"`
	// Chart name.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Chart string `json:"chart"`
	// Version is an exact version or a semver range; empty means the latest.
	// +kubebuilder:validation:MaxLength=128
	// +optional
	Version string `json:"version,omitempty"`
	// ReleaseName defaults to the service's name.
	// +kubebuilder:validation:MaxLength=53
	// +optional
	ReleaseName string `json:"releaseName,omitempty"`
	// SkipCRDs leaves out the chart's crds/ directory.
	// +optional
	SkipCRDs bool `json:"skipCRDs,omitempty"`
	// PlainHTTP talks to an OCI registry without TLS.
	// +optional
	PlainHTTP bool `json:"plainHTTP,omitempty"`
	// InsecureSkipTLSVerify accepts any server certificate.
	// +optional
	InsecureSkipTLSVerify bool `json:"insecureSkipTLSVerify,omitempty"`
	// CredentialsSecretRef names a Secret in the template's namespace with keys username and
	// password for the repository.
	// +optional
	CredentialsSecretRef *LocalObjectReference `json:"credentialsSecretRef,omitempty"`
}

// LocalObjectReference names an object in the referring object's namespace.
type LocalObjectReference struct {
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}

// ArtifactFormat says how the files of an artifact are rendered.
// +kubebuilder:validation:Enum=Manifests;Kustomize;Helm
type ArtifactFormat string

const (
	// ArtifactManifests renders every *.yaml, *.yml and *.json file under the path, in path order.
	ArtifactManifests ArtifactFormat = "Manifests"
	// ArtifactKustomize builds the Kustomize overlay at the path.
	ArtifactKustomize ArtifactFormat = "Kustomize"
	// ArtifactHelm renders the Helm chart directory at the path.
	ArtifactHelm ArtifactFormat = "Helm"
)

// FluxSourceKind is the kind of Flux source an ArtifactSource reads.
// +kubebuilder:validation:Enum=GitRepository;OCIRepository;Bucket
type FluxSourceKind string

// FluxSourceReference names a Flux source object in the template's namespace whose
// status.artifact (url, revision, digest) is the artifact to render.
type FluxSourceReference struct {
	// Kind is GitRepository, OCIRepository or Bucket.
	Kind FluxSourceKind `json:"kind"`
	// Name of the Flux object.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// APIVersion of the Flux object. Defaults to source.toolkit.fluxcd.io/v1, which Flux 2.6
	// and later serve for all three kinds.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	APIVersion string `json:"apiVersion,omitempty"`
}

// ArtifactSource is a tar.gz artifact: the one a Flux source object publishes, or an OCI
// artifact as `flux push artifact` writes it. Its files are manifests, a Kustomize overlay or
// a Helm chart directory. The ServiceTemplate controller resolves it to a digest and pins it
// in status.artifact; clusters render what is pinned, and the download is checked against the
// digest.
// +kubebuilder:validation:XValidation:rule="has(self.sourceRef) != has(self.url)",message="set exactly one of sourceRef and url"
// +kubebuilder:validation:XValidation:rule="!has(self.sourceRef) || (!has(self.plainHTTP) && !has(self.insecureSkipTLSVerify) && !has(self.credentialsSecretRef))",message="plainHTTP, insecureSkipTLSVerify and credentialsSecretRef apply to url only"
type ArtifactSource struct {
	// SourceRef names a Flux GitRepository, OCIRepository or Bucket in the template's namespace.
	// +optional
	SourceRef *FluxSourceReference `json:"sourceRef,omitempty"`
	// URL is an OCI artifact, oci://host/repository:tag or oci://host/repository@sha256:...;
	// a tag is resolved to its digest at every interval.
	// +kubebuilder:validation:Pattern=`^oci://[^/]+/.+`
	// +kubebuilder:validation:MaxLength=2048
	// +optional
	URL string `json:"url,omitempty"`
	// Path is the directory inside the artifact to render; empty is its root.
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:XValidation:rule="!self.startsWith('/') && !self.contains('..')",message="path must be relative and must not contain '..'"
	// +optional
	Path string `json:"path,omitempty"`
	// Format is how the files at the path are rendered. When empty it is detected: a
	// Chart.yaml makes a Helm chart, a kustomization.yaml a Kustomize overlay, anything else
	// manifests.
	// +optional
	Format ArtifactFormat `json:"format,omitempty"`
	// Interval is how often the source is resolved again, so that a new revision is rolled
	// out. Defaults to 1m.
	// +optional
	Interval *metav1.Duration `json:"interval,omitempty"`
	// ReleaseName is the Helm release name of a chart; it defaults to the service's name.
	// +kubebuilder:validation:MaxLength=53
	// +optional
	ReleaseName string `json:"releaseName,omitempty"`
	// PlainHTTP talks to the OCI registry without TLS.
	// +optional
	PlainHTTP bool `json:"plainHTTP,omitempty"`
	// InsecureSkipTLSVerify accepts any certificate from the OCI registry.
	// +optional
	InsecureSkipTLSVerify bool `json:"insecureSkipTLSVerify,omitempty"`
	// CredentialsSecretRef names a Secret in the template's namespace with keys username and
	// password for the OCI registry.
	// +optional
	CredentialsSecretRef *LocalObjectReference `json:"credentialsSecretRef,omitempty"`
}

// ArtifactStatus is the artifact a template's spec.artifact resolved to.
type ArtifactStatus struct {
	// URL the artifact is downloaded from: the Flux artifact's URL, or the OCI repository.
	URL string `json:"url"`
	// Revision is the source's revision (a Git branch and commit, an OCI tag and digest).
	// +optional
	Revision string `json:"revision,omitempty"`
	// Digest is "sha256:<hex>": of the tar.gz for a Flux artifact, of the manifest for an OCI
	// artifact. A download that does not match it is refused.
	Digest string `json:"digest"`
	// FetchedTime is when the template controller last resolved the source to this digest.
	// +optional
	FetchedTime *metav1.Time `json:"fetchedTime,omitempty"`
}

// Reasons of a ServiceTemplate's SourceAvailable condition (and a ClusterServiceStatus's
// Rendered condition) about an artifact source.
const (
	// ArtifactSourceNotFoundReason: the Flux source object, or its kind (Flux not installed on
	// the hub), does not exist.
	ArtifactSourceNotFoundReason = "ArtifactSourceNotFound"
	// ArtifactNotReadyReason: the Flux source has no artifact yet, or the template has not
	// been resolved yet; retried.
	ArtifactNotReadyReason = "ArtifactNotReady"
)

// DecryptionProvider is how the files of an artifact are decrypted.
// +kubebuilder:validation:Enum=SOPS
type DecryptionProvider string

// DecryptionSOPS decrypts files encrypted with SOPS (https://getsops.io) for age or PGP keys.
const DecryptionSOPS DecryptionProvider = "SOPS"

// Decryption decrypts the encrypted files of a template's artifact in memory, each time the
// template is rendered, with keys held in a Secret of the template's own namespace.
type Decryption struct {
	// Provider is SOPS, the only one.
	Provider DecryptionProvider `json:"provider"`
	// SecretRef names a Secret in the template's namespace (no other namespace can be named)
	// whose entries ending in .agekey are age identity files (age-keygen's output) and whose
	// entries ending in .asc are ASCII-armored PGP private keys without a passphrase.
	SecretRef LocalObjectReference `json:"secretRef"`
}

// DecryptionFailedReason: a file of the template's artifact is encrypted and could not be
// decrypted (no spec.decryption, no key in its Secret that opens it, or content changed since
// it was encrypted), or the decryption Secret holds no usable key. The message names the file
// and the Secret, never a value.
const DecryptionFailedReason = "DecryptionFailed"

// ServiceTemplateSpec says what to deploy: exactly one source, and default values.
// +kubebuilder:validation:XValidation:rule="[has(self.inline), has(self.resources), has(self.kustomize), has(self.helm), has(self.artifact)].filter(x, x).size() == 1",message="set exactly one source: inline, resources, kustomize, helm or artifact"
// +kubebuilder:validation:XValidation:rule="!has(self.decryption) || has(self.artifact)",message="decryption applies to an artifact source only"
type ServiceTemplateSpec struct {
	// Inline holds manifests as multi-document YAML.
	// +kubebuilder:validation:MaxLength=1048576
	// +optional
	Inline string `json:"inline,omitempty"`
	// Resources reads manifests from ConfigMaps and Secrets in the template's namespace.
	// +kubebuilder:validation:MaxItems=64
	// +listType=atomic
	// +optional
	Resources []ManifestReference `json:"resources,omitempty"`
	// Kustomize builds an overlay held in ConfigMaps.
	// +optional
	Kustomize *KustomizeSource `json:"kustomize,omitempty"`
	// Helm renders a chart.
	// +optional
	Helm *HelmSource `json:"helm,omitempty"`
	// Artifact renders the files of a Flux source's artifact or of an OCI artifact.
	// +optional
	Artifact *ArtifactSource `json:"artifact,omitempty"`
	// Decryption decrypts the artifact's SOPS-encrypted manifests in memory at render time,
	// with keys from a Secret in the template's namespace. No error quotes what was decrypted,
	// whatever kind it declares; drift records and previews redact the values of Secrets.
	// +optional
	Decryption *Decryption `json:"decryption,omitempty"`
	// Values are defaults, as a YAML map, that each service's values override. The text is a Go
	// template with .Cluster.Name, .Cluster.Namespace, .Cluster.Labels and .Cluster.Annotations.
	// +kubebuilder:validation:MaxLength=262144
	// +optional
	Values string `json:"values,omitempty"`
	// Templating says whether manifest text is a Go template. Defaults to None.
	// +kubebuilder:default=None
	// +optional
	Templating TemplatingMode `json:"templating,omitempty"`
}

// ServiceTemplateStatus is the observed state of a ServiceTemplate.
type ServiceTemplateStatus struct {
	// Conditions: Ready says whether the template's source could be read.
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=32
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// ObservedGeneration is the generation the status was computed from.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Artifact is what spec.artifact resolved to last: clusters render this digest. It is
	// kept while the source cannot be resolved.
	// +optional
	Artifact *ArtifactStatus `json:"artifact,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=holdfast,shortName=hfst
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Chart",type=string,JSONPath=`.spec.helm.chart`,description="Helm chart, if any"
// +kubebuilder:printcolumn:name="Version",type=string,JSONPath=`.spec.helm.version`
// +kubebuilder:printcolumn:name="Artifact",type=string,JSONPath=`.status.artifact.revision`,description="Artifact revision, if any",priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// ServiceTemplate is what to deploy: manifests, a Kustomize overlay or a Helm chart, with
// default values. MultiClusterServices reference it by namespace and name.
type ServiceTemplate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ServiceTemplateSpec   `json:"spec,omitempty"`
	Status ServiceTemplateStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// ServiceTemplateList is a list of ServiceTemplates.
type ServiceTemplateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ServiceTemplate `json:"items"`
}

// GetConditions returns the ServiceTemplate's conditions.
func (t *ServiceTemplate) GetConditions() []metav1.Condition { return t.Status.Conditions }

// SetConditions replaces the ServiceTemplate's conditions.
func (t *ServiceTemplate) SetConditions(c []metav1.Condition) { t.Status.Conditions = c }
