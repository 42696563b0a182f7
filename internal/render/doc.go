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
// Every render runs under a budget, Limits: a time limit (10 s), a limit on
// the text its templates write (16 MiB), on the objects it yields (10,000)
// and on loop iterations and template calls (1,000,000), with defaults for
// each. Template functions whose output an argument sizes (repeat, indent,
// until, seq, randAlphaNum, printf widths...) are capped at MaxValueBytes
// and MaxListLength. Because a range needs no function to run forever,
// template text is instrumented before it is parsed: every loop body and
// template call takes a step from the budget, every printed value is
// measured before fmt builds it (instrument.go). Helm charts get the same
// instrumentation and capped functions through Helm's CustomTemplateFuncs.
// Going over a limit is ReasonRenderLimitExceeded, a permanent error: the
// declaration has to change; running out of time is ReasonRenderTimedOut,
// retried with backoff (the other limits bound the templates' work).
//
// Render does not default namespaces: the apply step does it with the target
// cluster's REST mapper, which is the only thing that knows whether a kind is
// namespaced.
package render
