// Package drift watches what Holdfast manages on target clusters and says when a managed object
// needs another look. The watches go through each cluster's cache, which selects only objects
// labelled holdfast.dev/managed-by, so the controller holds what it manages, not the cluster.
// An update counts only when it changes the values of the fields Holdfast owns (its
// server-side-apply field set): API defaulting, status updates, resourceVersion churn and fields
// other managers add are not drift. A deleted object always is.
//
// This is the first increment of drift handling: detection feeds the one apply path, which
// corrects. Field-level records, authors, Report mode, exclusions and fight detection build on it.
package drift
