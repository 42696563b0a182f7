// Package templatesource reads a ServiceTemplate's source from the hub: the ConfigMaps and
// Secrets its manifests and Kustomize files are in, and its chart's credentials, and maps the
// template to the render.Source that package render renders. The ServiceTemplate controller
// (which checks a template once) and the ClusterServiceStatus controller (which renders it for
// each cluster) both read templates through it, so that what is read, from where, and how a
// chart reference is built are written once.
//
// An artifact source (artifact.go) is resolved by the ServiceTemplate controller
// (ResolveArtifact: a Flux object's status.artifact, read from the API server so that no Flux
// informer is needed, or an OCI tag's digest) and rendered by everyone from what
// status.artifact pins, downloaded through Artifacts and mapped by ArtifactSource, a pure
// function, to manifests, a Kustomize overlay or a chart directory. An artifact's files
// encrypted with SOPS are decrypted there (decryption.go, with package decrypt), in memory, at
// every render, with the keys of the Secret spec.decryption names in the template's namespace;
// the plaintext is kept nowhere but in the render's source, and is marked sensitive.
//
// Neither ConfigMap nor Secret data is ever in the manager's cache: it keeps their identity and
// resourceVersion only (so that anyone's ConfigMaps cannot fill the controller's memory, and
// kubectl's last-applied annotation does not keep a Secret's data). Secrets are read from the
// API server each time; a ConfigMap the cache knows is read from the API server once per
// version, kept in RecentConfigMaps, which is bounded in bytes. Every document read from a Secret
// is marked render.Document.Sensitive, whatever kinds it declares, and so is every file that came
// out of a decryption, so that no render error quotes it: redaction follows where content came
// from. A referenced object that cannot be read, or a key a
// ManifestReference names that is not there, is a *ReadError; each controller words it for the
// object it reports on.
package templatesource
