// Package admission builds the admission policies Holdfast applies on a target for a service set,
// which the target's API server runs itself (there is no webhook server to run or to be down):
//
//   - attribution (attribution.go): a MutatingAdmissionPolicy and its binding
//     (admissionregistration.k8s.io/v1, stable from Kubernetes 1.36) naming the person behind a
//     drift, for drift.attribution Auto;
//   - prevention (prevention.go, fields.go): a ValidatingAdmissionPolicy and its binding per mode
//     (stable from 1.30) that refuse (Deny) or warn about (Warn) changes to the service set's
//     objects, for drift.prevention. An update is covered only when it takes a field from
//     Holdfast's own field set (the fieldsV1 of Holdfast's apply entry in managedFields, which the
//     API server computes before admission runs), outside the paths the drift ignore rules name,
//     which fields.go compiles into CEL; a deletion unless its namespace is being deleted; and
//     any update written under Holdfast's field manager name (claimsHoldfast), which would
//     otherwise keep Holdfast's field set as it was.
//     Holdfast, the break-glass users and groups, the cluster's own controllers and objects
//     exempted on the cluster are never covered.
//
// Attribution: on every UPDATE of an object carrying the service set's labels (Holdfast's managed-by label and
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
// The objects of both are ordinary managed objects of the service set: the controller applies
// them through the one apply path as services of their own (AttributionService,
// PreventionService), so they are corrected when someone changes them, and pruned when the
// feature is switched Off, the cluster is withdrawn or the service set is deleted. Both have
// failurePolicy Ignore.
package admission
