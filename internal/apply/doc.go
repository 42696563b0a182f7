// Package apply is Holdfast's one way of writing to a target cluster: deployment, periodic full
// reconciliation and drift correction all go through Applier, so that every object Holdfast
// manages is written the same way, by the same field manager, with the same labels.
//
// Objects are applied with server-side apply as field manager "holdfast" with forced ownership:
// Holdfast is the authority for the fields it declares and for nothing else, so fields set by
// other managers (an HPA's replicas, an injected sidecar, a controller's annotations) are left
// alone. Objects are applied in stages: CustomResourceDefinitions, Namespaces and ClusterRoles
// first, then cluster-scoped "class" kinds, then everything else in a stable kind order
// (fluxcd/pkg/ssa's ReconcileOrder). Custom resources are applied only once their CRD is
// Established.
//
// Nothing is written when nothing changed. Flux decides per object with a server-side dry-run
// apply, but a dry-run PATCH is still a mutating request, and a fleet of 1,000 clusters must be
// able to run a full reconcile without any. Applier instead keeps two digests per object in an
// inventory that the caller persists (InventoryEntry): the digest of the object as declared
// (DesiredDigest) and the digest of the values of the fields Holdfast owns in the live object, as
// recorded by the API server's managedFields (fieldset.OwnedDigest). An object whose declaration did not
// change and whose owned fields still hold the values Holdfast last wrote is left untouched; the
// only requests are reads (one List per kind and namespace, selected by Holdfast's labels).
// OwnedDigest ignores server defaulting, status, other managers' fields and metadata churn, and
// changes when anyone else changes or removes a value Holdfast owns. Apply does not judge such a
// change itself: when the declaration is unchanged but the live copy is not as left (or is
// gone), it asks drift.Decide whether the change counts and passes the verdict to
// Options.Correct, which decides whether to put it back now.
//
// Failures are per object: an object the API server rejects, of a kind the cluster does not
// serve, without a namespace or too large is reported as Failed with the reason, and the other
// objects are still applied. Result says exactly what is applied now, and its Inventory is what
// the caller stores for the next call. IsTransient tells retryable faults (rate limits, server
// errors, timeouts, a webhook that is down) from declarations that need fixing.
//
// Objects that were applied before but are no longer declared are pruned, in reverse order
// (custom resources before their CRDs, namespaced objects before their Namespace), but only when
// the live object still carries the caller's labels and the caller's Claim agrees it is its own;
// an object that changed hands is dropped from the inventory and left in place.
//
// Objects that exist on the cluster but that Holdfast did not create are never taken over
// silently: with Options.Foreign, a declared object Holdfast never applied is read first (one
// GET, on its first apply only) and, when Foreign says it is someone else's, left untouched and
// reported Conflict, unless Options.Adopt. An adopted object is marked in its inventory entry
// and, when pruned or withdrawn, let go instead of deleted: left in place without Holdfast's
// labels.
//
// Secret values are never shown: dry-run diffs mask Secret data, stringData and kubectl's
// last-applied annotation, and the inventory holds only digests.
package apply
