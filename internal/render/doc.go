// Package render turns the source of a Holdfast service into the list of
// Kubernetes objects to apply to one target cluster.
//
// A ServiceTemplate names one source: inline multi-document YAML, manifests
// read from ConfigMaps or Secrets, a Kustomize overlay, or a Helm chart from an
// HTTP repository or an OCI registry. Render resolves values (the template's
// defaults deep-merged with the service's overrides, both Go templates over the
// target cluster's name, labels and annotations), renders the source, and
// checks the result the way Holdfast needs it: every object has an apiVersion,
// a kind and a stable name, no object appears twice, none is over 1 MiB. The
// output is deterministic, in declaration order (Helm: Helm's install order),
// with a digest over the whole set so callers can tell cheaply whether
// anything changed.
//
// Render is pure: given the same Request and the same charts it returns the
// same objects. The only input from outside is the ChartSource, which fetches
// Helm charts; package render/chartsource provides the real one, with a cache.
//
// Failures are *Error values with a Reason, the object or document concerned,
// and a message that says what to fix. Transient reports which of them are
// worth retrying with backoff (a chart repository that did not answer) and
// which need a user to change the declaration. Messages never contain Secret
// data, values or credentials.
//
// Render does not default namespaces: the apply step does it with the target
// cluster's REST mapper, which is the only thing that knows whether a kind is
// namespaced.
package render
