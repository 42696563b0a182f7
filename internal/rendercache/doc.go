// Package rendercache renders a service once per revision of its inputs and keeps the result on
// the hub, so that values a Helm chart generates stay what they were until an input changes.
//
// Many published charts generate values at render time — randAlphaNum passwords, uuidv4
// identifiers, genCA certificates, genPrivateKey keys — and rely on Helm running only on
// `helm install` and `helm upgrade`. Holdfast renders on every reconcile; without this package
// each full reconcile (periodic, requested, or after a restart) would produce new values, a new
// digest, and an apply that rotates passwords and certificates under running workloads.
// Holdfast's own Go templates (inline manifests, ConfigMap/Secret references, Kustomize files)
// are hermetic — they have no random, time or key functions — and Kustomize generates nothing
// random, so their renders are already a function of their inputs and are not kept: only Helm
// services are.
//
// The input digest (InputDigest) covers everything a render reads: the render.Request — the
// service's name and target namespace, the target Cluster's name, namespace, labels and
// annotations and Kubernetes version, the template's and the service's values, and the source
// with the contents of the ConfigMaps and Secrets it references — and the content of the chart
// the version resolved to (every file of the chart and its subcharts). Where the chart was
// fetched from and how (repository URL, version constraint, credentials, TLS and plain-HTTP
// settings) is left out: moving a chart to a mirror, pinning the version a range already
// resolves to, or rotating repository credentials renders nothing again. The digest is cheap:
// the template's sources are read on every reconcile anyway, and the chart comes from
// render/chartsource's cache.
//
// A Session (Store.Open) holds what is kept for one ClusterServiceStatus: a Secret (rendered
// manifests can hold Secret values) named after it ("<namespace>.<name>", naming.RenderingsName)
// in the store's namespace — the controller's own, the only namespace where it may write Secrets
// — of type SecretType, labelled with its cluster, service set and the status object's UID; the
// status controller deletes it (Store.Delete) when it cleans up. Holdfast kept it beside the
// status object before, owned by it: a session reads it from there once when the store's
// namespace has none, so an upgrade renders no chart anew, and the garbage collector removes
// the old one with its owner. Each data key is
// a service's name; its value is the gzip-compressed JSON of the input digest, the rendered
// objects, their digest and the chart version. Session.Render uses the kept objects when the
// input digest matches and renders otherwise; Session.Save writes what changed, once per
// reconcile, and nothing when nothing did. The Secret is read from the API server (never
// cached) and its content is never logged or put in an error.
//
// In front of the hub's tier, a process keeps in memory what the last render of each service
// declared, every kind of service, zstd-packed, under the same input digest (Declaration,
// declaration.go; the caller holds one per service and bounds them all together: the status
// controller drops the least recently used). A full reconcile whose service's inputs have that
// digest takes the rendering back from it instead of rendering; a Helm service is still read
// back from the Secret, since another replica may have rendered it again meanwhile and the
// Secret's copy is the one that stays. A drift correction finds the drifted objects in it
// (Find) without decoding the others, and a watch event on an object the service does not
// declare is told apart from the keys it holds (Declares), without unpacking. A restart empties
// this tier: the next full reconcile renders, or reads the Secret.
//
// When an input changes, the service is rendered again once: the generated values change —
// like `helm upgrade` without `lookup` — are applied, kept, and then stay until the next change.
// A cluster upgrade (a new Kubernetes version) is such a change, as is a new chart version. A
// chart that must keep a value across changes should take it from its values (for example from
// a Secret the template references) rather than generate it. Helm's `lookup` cannot help:
// Holdfast renders without a connection to the target, so `lookup` returns nothing, and charts
// that use it to reuse existing values generate new ones instead.
//
// Bounds and failures. A Secret holds at most 1 MiB (MaxSize): services are kept in declaration
// order while they fit; one that does not is rendered on every reconcile, as before this
// package, and Save reports it (the caller says so in a condition and a log line). A kept entry
// that cannot be decoded, or whose objects do not match its digest, is rendered again. A Secret
// of that name that is not of SecretType is someone else's: it is neither read nor written, and
// nothing is kept. Failing to read or write the Secret is an error for the services concerned
// (Unavailable), so the caller retries rather than applying new generated values it could not
// keep. Renderings from before a change to how Holdfast renders are still used until an input
// changes (the input digest has a format version, bumped only when a kept rendering must not
// be reused), so upgrading Holdfast does not rotate generated values either.
//
// Whoever can write Secrets in a Cluster's namespace can change what is kept there, and so what
// is applied to that cluster; they can already replace the Cluster's kubeconfig Secret, which
// lives in the same namespace, so this gives no one a new power.
package rendercache
