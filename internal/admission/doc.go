// Package attribution builds what names the person behind a drift: a MutatingAdmissionPolicy
// and its binding (admissionregistration.k8s.io/v1, stable from Kubernetes 1.36) that Holdfast
// applies on a target for a service set whose drift.attribution is Auto. The API server itself
// runs the policy; there is no webhook server to run or to be down.
//
// On every UPDATE of an object carrying the service set's labels (Holdfast's managed-by label and
// its owner label) by anyone but Holdfast's own identities there (objectSelector, matchConditions
// on request.userInfo.username), the policy stamps two annotations with an ApplyConfiguration
// (CEL): holdfast.dev/changed-by, the requester's user name, and holdfast.dev/changed-at, the
// latest time in the object's managedFields at that moment, which the API server has just set on
// the requester's entry (CEL has no clock). Package drift reads them (drift.StampedUser) and
// never counts them as drift.
//
// Subresources are not matched: a status write is not a person's change, and a write through
// the scale subresource carries a Scale object, whose annotations are not the object's. A
// drift made through one is attributed to its field manager only, as before.
//
// failurePolicy is Ignore: a broken policy never blocks anyone; the update is then simply not
// stamped. Admission configuration objects are never subject to admission policies, so the
// policy never stamps itself.
//
// The objects are ordinary managed objects of the service set: the controller applies them
// through the one apply path as a service of their own (Service), so they are corrected when
// someone changes them, and pruned when attribution is switched Off, the cluster is withdrawn or
// the service set is deleted.
package admission
