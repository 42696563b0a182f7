package apply

import (
	"errors"
	"fmt"
	"time"

	"holdfast.dev/holdfast/internal/drift"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// DefaultCRDWaitTimeout bounds the wait for an applied CustomResourceDefinition to become
// Established when Options.CRDWaitTimeout is zero.
const DefaultCRDWaitTimeout = 30 * time.Second

// DefaultRecreateTimeout bounds the wait for an object deleted to be re-created to be gone,
// when Options.RecreateTimeout is zero.
const DefaultRecreateTimeout = 30 * time.Second

// Ref identifies an object in a target cluster.
type Ref struct {
	Group     string `json:"group,omitempty"`
	Version   string `json:"version"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
}

// RefOf returns the Ref of obj.
func RefOf(obj *unstructured.Unstructured) Ref {
	gvk := obj.GroupVersionKind()
	return Ref{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind, Namespace: obj.GetNamespace(), Name: obj.GetName()}
}

// GroupVersionKind returns the group, version and kind of r.
func (r Ref) GroupVersionKind() schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: r.Group, Version: r.Version, Kind: r.Kind}
}

// String formats r as "apps/v1 Deployment ns/name", or "v1 Namespace name" for a cluster-scoped
// object.
func (r Ref) String() string {
	gv := r.Version
	if r.Group != "" {
		gv = r.Group + "/" + r.Version
	}
	name := r.Name
	if r.Namespace != "" {
		name = r.Namespace + "/" + r.Name
	}
	return gv + " " + r.Kind + " " + name
}

// key identifies an object independently of the API version it is served at, so that moving a
// declaration from v1beta1 to v1 is a change to the same object, not a prune and a create.
type key struct {
	Group, Kind, Namespace, Name string
}

func (r Ref) key() key {
	return key{Group: r.Group, Kind: r.Kind, Namespace: r.Namespace, Name: r.Name}
}

// InventoryEntry records one object Holdfast applied. The caller persists the inventory (in a
// status object) and passes it back as Options.Previous; it holds digests, never object content.
type InventoryEntry struct {
	Ref `json:",inline"`
	// DesiredDigest is the digest of the object as declared, after namespace defaulting and
	// Holdfast's labels and annotations (see DesiredDigest).
	DesiredDigest string `json:"desiredDigest"`
	// OwnedDigest is the digest of the values of the fields Holdfast owned in the object the API
	// server returned from the last apply (see OwnedDigest).
	OwnedDigest string `json:"ownedDigest"`
	// Adopted records that the object existed before Holdfast first applied it and was taken
	// over (see Options.Adopt): pruning and Delete leave it in place instead of deleting it.
	Adopted bool `json:"adopted,omitempty"`
}

// Action is what happened to one object, or in a dry run, what would happen.
type Action string

const (
	// Created: the object did not exist and was applied.
	Created Action = "Created"
	// Configured: the object existed and the apply changed it.
	Configured Action = "Configured"
	// Unchanged: the object is as declared; nothing was written (or an apply changed nothing).
	Unchanged Action = "Unchanged"
	// Deleted: the object was pruned or withdrawn (or was already gone).
	Deleted Action = "Deleted"
	// Conflict: Options.Claim said the live object belongs to someone else, or it exists and
	// Holdfast did not create it (ObjectResult.Foreign, see Options.Foreign); it was not touched
	// and is not in the inventory.
	Conflict Action = "Conflict"
	// Failed: the object could not be applied or deleted; Err says why.
	Failed Action = "Failed"
	// Skipped: the object was deliberately not processed this time (pruning postponed, context
	// ended); it keeps its place in the inventory.
	Skipped Action = "Skipped"
	// WouldCreate, WouldUpdate and WouldDelete are the dry-run counterparts of Created,
	// Configured and Deleted.
	WouldCreate Action = "WouldCreate"
	WouldUpdate Action = "WouldUpdate"
	WouldDelete Action = "WouldDelete"
	// Ignored: Options.Ignore exempted the live object; it was not touched and keeps its place
	// in the inventory.
	Ignored Action = "Ignored"
	// Drifted and Missing: the declaration did not change since the last apply but the live
	// object did (Drifted) or is gone (Missing), and Options.Correct said not to put it back
	// now. It was not touched and keeps its place in the inventory.
	Drifted Action = "Drifted"
	Missing Action = "Missing"
	// Orphaned: the object is no longer managed (not declared and not pruned, it no longer
	// carries Holdfast's labels, or it was adopted); it was left in the cluster and dropped from
	// the inventory.
	Orphaned Action = "Orphaned"
)

// ObjectResult is the outcome for one object.
type ObjectResult struct {
	Ref    `json:",inline"`
	Action Action `json:"action"`
	// Applied reports that the object is, after this call, as declared in the cluster: created,
	// configured, or verified unchanged. A CRD can be applied and still Failed (not Established).
	Applied bool `json:"applied,omitempty"`
	// Diff is set in dry runs for WouldCreate and WouldUpdate: one line per changed field,
	// "path: old -> new", with Secret values masked.
	Diff string `json:"diff,omitempty"`
	// Message is a human-readable explanation; for failures, the API server's message.
	Message string `json:"message,omitempty"`
	// Err is set for Failed objects. It wraps the API server's error, or one of ErrUnknownKind,
	// ErrNoNamespace, ErrInvalidObject, ErrTooLarge, ErrDuplicate, ErrNotEstablished.
	Err error `json:"-"`
	// Transient reports that Err is worth retrying as is (see IsTransient).
	Transient bool `json:"transient,omitempty"`
	// Drift reports that the declaration did not change since the last apply but the live
	// object did, or is gone: with Applied the call put it back (a correction), otherwise the
	// Action is Drifted or Missing. Whether the change counts as drift is drift.Decide's
	// verdict, which Options.Correct receives.
	Drift bool `json:"drift,omitempty"`
	// Recreated reports that the object (drifted, or declared anew) was deleted and created
	// again as declared, because only that could change its immutable fields (see
	// Options.Recreate), which ImmutableFields names.
	Recreated       bool     `json:"recreated,omitempty"`
	ImmutableFields []string `json:"immutableFields,omitempty"`
	// ConflictWith names the owner Options.Claim reported for a Conflict, or the other
	// declaration Options.Contend did.
	ConflictWith string `json:"conflictWith,omitempty"`
	// DesiredDigest is, for a Conflict Options.Contend reported, what this side declares.
	DesiredDigest string `json:"desiredDigest,omitempty"`
	// Foreign reports a Conflict with an object that exists on the cluster but that Holdfast did
	// not create, left untouched because Options.Adopt is off.
	Foreign bool `json:"foreign,omitempty"`
	// Adopted reports that the object exists and Holdfast did not create it, and that this call
	// took it over (Options.Adopt) or, unless Applied, tried to.
	Adopted bool `json:"adopted,omitempty"`
	// Health is the object's health computed from the object the cluster returned or showed,
	// for objects Applied (HealthOf); zero otherwise.
	Health Health `json:"health,omitzero"`
}

// Result is the outcome of Apply or Delete.
type Result struct {
	// Objects has one entry per declared object, in the order they were processed, followed by
	// one entry per pruned (or withdrawn) object.
	Objects []ObjectResult
	// Inventory is what Holdfast manages in the cluster after this call: applied and unchanged
	// objects, objects that failed now but were applied before, and objects whose pruning failed
	// or was postponed. In a dry run it is Options.Previous. Persist it and pass it back as
	// Options.Previous.
	Inventory []InventoryEntry
	// Changed counts the objects this call created, configured or deleted.
	Changed int
}

// Failed returns the results of objects that failed.
func (r *Result) Failed() []ObjectResult {
	var out []ObjectResult
	for _, o := range r.Objects {
		if o.Action == Failed {
			out = append(out, o)
		}
	}
	return out
}

// Err joins the errors of every failed object, each prefixed with its Ref; nil if none failed.
func (r *Result) Err() error {
	var errs []error
	for _, o := range r.Failed() {
		errs = append(errs, fmt.Errorf("%s: %w", o.Ref, o.Err))
	}
	return errors.Join(errs...)
}

// Object returns the result for the object identified by ref, ignoring its API version.
func (r *Result) Object(ref Ref) (ObjectResult, bool) {
	for _, o := range r.Objects {
		if o.key() == ref.key() {
			return o, true
		}
	}
	return ObjectResult{}, false
}

// KeepsPrevious reports whether an object left with this action by Apply is still managed as
// last applied: not applied now (failed, skipped, ignored, or drift left in place), but still in
// the cluster from before, so its entry from Options.Previous stays in the inventory.
func (a Action) KeepsPrevious() bool {
	switch a {
	case Failed, Skipped, Ignored, Drifted, Missing:
		return true
	}
	return false
}

// Options configure one Apply or Delete call.
type Options struct {
	// DefaultNamespace is given to namespaced objects that declare none. A namespaced object
	// without a namespace and no DefaultNamespace fails with ErrNoNamespace.
	DefaultNamespace string
	// Labels are set on every applied object (for example holdfast.dev/managed-by and the
	// owner), so that watches on the target cluster can select only Holdfast's objects. Pruning
	// deletes only live objects that still carry all of them, and live objects are listed with
	// them as the selector.
	Labels map[string]string
	// Annotations are set on every applied object.
	Annotations map[string]string
	// Previous is the inventory returned by the last call, for change detection and pruning.
	Previous []InventoryEntry
	// Prune deletes objects in Previous that are no longer declared. Without it they are left in
	// place and reported Orphaned.
	Prune bool
	// DryRun changes nothing: objects are reported WouldCreate, WouldUpdate (with a diff),
	// WouldDelete or Unchanged, using server-side dry-run where a write would happen.
	DryRun bool
	// Claim, if set, is called with the live object before it is written or deleted. ok=false
	// means it belongs to owner: it is reported as Conflict, never written, never pruned, and
	// left out of the inventory. Claim is not called for objects that do not exist.
	Claim func(live *unstructured.Unstructured) (owner string, ok bool)
	// Contend, if set, is called for an object that exists, before it is written, with its
	// desired digest. ok=false means another declaration of the same object, by another
	// registration of the same cluster (other names it), differs: it is reported as Conflict
	// like a Claim's, never written, never pruned, left out of the inventory, and its
	// ObjectResult carries its DesiredDigest, so that the other side sees what this one declares
	// and neither rewrites it.
	Contend func(ref Ref, desiredDigest string) (other string, ok bool)
	// Ignore, if set, is called with the live object after Claim: true leaves the object as it
	// is (Ignored), for example when its owner on the cluster exempted it from correction.
	Ignore func(live *unstructured.Unstructured) bool
	// Correct, if set, is called for every object whose declaration did not change since the
	// last apply but whose live copy did or is gone (see ObjectResult.Drift), before it would be
	// put back, with the declared object, the live one (nil when gone; not to be changed) and
	// drift.Decide's verdict on it (ignoring the fields IgnoredFields names). false leaves it as
	// it is (Drifted or Missing). Not called in a dry run. It may be called concurrently.
	Correct func(desired, live *unstructured.Unstructured, v drift.Verdict) bool
	// Recreate, if set, is asked, for an object whose apply the API server refused because it
	// changes immutable fields, whether to delete the live object and create it as declared: a
	// drifted object's correction, or a change of its declaration (a new revision). Not called
	// in a dry run.
	Recreate func(desired *unstructured.Unstructured) bool
	// RecreateTimeout bounds the wait for a deleted object to be gone (finalizers) before it is
	// created again; DefaultRecreateTimeout when zero.
	RecreateTimeout time.Duration
	// IgnoredFields, if set, returns JSON pointers (RFC 6901) of fields of a declared object
	// that Holdfast must not force over another field manager: when the live object has a
	// different value there and Holdfast does not own it, the field is left out of the apply,
	// so the other manager's value stays (an HPA keeps its replicas).
	IgnoredFields func(desired *unstructured.Unstructured) []string
	// ClaimSelector, if set, are labels that every live object Claim could refuse carries
	// (for example holdfast.dev/managed-by alone, without the owner). Live objects are then
	// listed by it instead of Labels, and outside a dry run an object the list does not return
	// is applied without reading it first when, without Foreign, it is new (unlabelled and
	// claimable anyway). One Previous holds is read with a GET when the list does not return it
	// (it was deleted, or replaced by one without Holdfast's labels: the drift verdict differs),
	// and so, with Foreign, is a new one, to learn whether it exists.
	ClaimSelector map[string]string
	// Foreign, if set, reports whether a live object that Previous does not hold was not created
	// by Holdfast (it lacks Holdfast's marks, say its managed-by label). Such an object is taken
	// over only with Adopt; otherwise it is reported Conflict with ObjectResult.Foreign and never
	// written. Objects Previous holds were applied before and are never foreign; nor are
	// Corrections. nil: every existing object is applied over, as if it were Holdfast's.
	Foreign func(live *unstructured.Unstructured) bool
	// Adopt applies foreign objects (see Foreign) and marks their inventory entries Adopted:
	// pruning and Delete then leave them in place, with Labels, the keys of Annotations and
	// AdoptedAnnotation removed, instead of deleting them. The mark stays as long as the entry
	// does.
	Adopt bool
	// AdoptedAnnotation, if set, is an annotation set to "true" on every object whose entry is
	// Adopted, so that the live object says it was not created by Holdfast even to those without
	// this inventory (another service set taking it over, a later declaration of an object left
	// in place): Foreign should report objects carrying it. It is written by field manager
	// "holdfast-adoption", apart from the applied configuration, once per object (when missing).
	AdoptedAnnotation string
	// Corrections says that desired are objects applied before and declared as they were then
	// (the caller knows the declaration did not change), handed over because their live copies
	// changed: each is read on its own (never by listing its kind), and one whose live copy is
	// not as Holdfast left it is drift, for Correct to decide on, even without an entry in
	// Previous. This is how one drifted object is put back without reading, rendering or
	// comparing the rest of its set. Previous, if given, must hold only entries of desired, and
	// nothing is pruned.
	Corrections bool
	// Live, if set, returns for a correction (Corrections) the live object of ref as the
	// caller last saw it, known to be the newest version seen (the drift watch's copy, see
	// drift.LiveCopies), or nil. The object is applied over without being read again; the
	// caller gives it up. nil, or a nil object: it is read with a GET.
	Live func(ref Ref) *unstructured.Unstructured
	// EnsureNamespace, if set, is created before anything is applied when the cluster does not
	// have it (not in a dry run). It is not in the inventory: never pruned, never deleted.
	EnsureNamespace string
	// Force re-applies every object even when the digests say it is unchanged (a manual or
	// periodic full correction).
	Force bool
	// Health, if set, judges the health of the objects it knows (ok true) instead of kstatus
	// (HealthOf): the service set's CEL health checks.
	Health func(*unstructured.Unstructured) (h Health, ok bool)
	// CRDWaitTimeout bounds the wait for applied CRDs to become Established; default
	// DefaultCRDWaitTimeout.
	CRDWaitTimeout time.Duration
}
