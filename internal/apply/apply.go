package apply

import (
	"context"
	"encoding/base64"
	"fmt"
	"sync"
	"time"

	"github.com/fluxcd/cli-utils/pkg/kstatus/polling"
	"github.com/fluxcd/pkg/ssa"
	"github.com/fluxcd/pkg/ssa/utils"
	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"holdfast.dev/holdfast/internal/drift"
	"holdfast.dev/holdfast/internal/fieldset"
)

// Applier applies sets of objects to one target cluster. It is safe for concurrent use; calls
// for the same set of objects must not overlap (the caller serialises them per set and cluster).
type Applier struct {
	client       client.Client
	mapper       meta.RESTMapper
	waiter       *ssa.ResourceManager
	names        client.Reader // lists names (metadata) without a cache; nil: no such lists
	concurrency  int
	pollInterval time.Duration
}

// Option configures an Applier.
type Option func(*Applier)

// WithConcurrency sets how many objects of the same kind are read, applied or deleted at once
// (default 4). Kinds are still handled one after another, in order.
func WithConcurrency(n int) Option {
	return func(a *Applier) {
		if n > 0 {
			a.concurrency = n
		}
	}
}

// WithNameLister gives the Applier a reader that lists objects' metadata straight from the
// cluster (a client.Reader that is not a cache, such as cluster.GetAPIReader), to learn with one
// List which new objects of a kind and namespace are absent (see readAbsent). Without it each is
// read with a GET.
func WithNameLister(r client.Reader) Option {
	return func(a *Applier) { a.names = r }
}

// WithPollInterval sets how often an applied CRD is checked for being Established (default
// 250ms).
func WithPollInterval(d time.Duration) Option {
	return func(a *Applier) {
		if d > 0 {
			a.pollInterval = d
		}
	}
}

// New returns an Applier writing through c, a client for one target cluster whose RESTMapper
// discovers kinds lazily (apiutil.NewDynamicRESTMapper), so kinds of CRDs applied in the same
// call resolve once they are Established.
func New(c client.Client, opts ...Option) *Applier {
	a := &Applier{client: c, mapper: c.RESTMapper(), concurrency: 4, pollInterval: 250 * time.Millisecond}
	for _, o := range opts {
		o(a)
	}
	poller := polling.NewStatusPoller(c, a.mapper, polling.Options{})
	a.waiter = ssa.NewResourceManager(c, poller, ssa.Owner{Field: fieldset.FieldManager, Group: "holdfast.dev"})
	return a
}

// item is one declared object on its way through Apply.
type item struct {
	obj           *unstructured.Unstructured // the object to apply: a copy, labelled and defaulted
	ref           Ref
	stage         int
	tier          int
	desiredDigest string
	live          *unstructured.Unstructured // nil if absent; valid when liveKnown
	liveKnown     bool
	current       *unstructured.Unstructured // the object in the cluster after this call
	unvalidated   string                     // dry run: why the server cannot check it yet
	adopted       bool                       // taken over now, or before (its entry says so)
	result        ObjectResult
	entry         *InventoryEntry // set when the object is applied
	done          bool
}

func (it *item) fail(err error) {
	it.result.Action = Failed
	it.result.Err = err
	it.result.Message = Message(err)
	it.result.Transient = IsTransient(err)
	it.done = true
}

// run holds the state of one Apply or Delete call.
type run struct {
	a    *Applier
	opts Options
	prev map[key]InventoryEntry
	// crdKinds are the kinds defined by CRDs in the declared set, with whether they are
	// namespaced, so their objects can be resolved before discovery serves them.
	crdKinds map[schema.GroupKind]bool

	mu            sync.Mutex
	newNamespaces map[string]bool // dry run: namespaces the set would create
}

func newRun(a *Applier, opts Options) *run {
	if opts.CRDWaitTimeout <= 0 {
		opts.CRDWaitTimeout = DefaultCRDWaitTimeout
	}
	r := &run{a: a, opts: opts, prev: map[key]InventoryEntry{}, crdKinds: map[schema.GroupKind]bool{}, newNamespaces: map[string]bool{}}
	for _, e := range opts.Previous {
		r.prev[e.key()] = e
	}
	return r
}

// Apply applies desired to the cluster and, with opts.Prune, deletes what opts.Previous holds
// and desired no longer declares. desired is not modified.
//
// Per-object failures are reported in the Result, never as the error; the error is non-nil only
// when ctx ended before every object was handled (the unhandled ones are Skipped). Pruning is
// postponed (entries Skipped and kept in the inventory) while any declared object fails, so
// that a broken or half-applied declaration never deletes what it may still mean to keep.
func (a *Applier) Apply(ctx context.Context, desired []*unstructured.Unstructured, opts Options) (*Result, error) {
	log := ctrl.LoggerFrom(ctx).WithValues("dryRun", opts.DryRun)
	r := newRun(a, opts)
	r.ensureNamespace(ctx, desired)
	stages := r.plan(desired)
	for s, items := range stages {
		r.resolve(ctx, items)
		sortItems(items)
		r.readLive(ctx, items)
		r.forEachTier(ctx, len(items), func(i int) int { return items[i].tier }, func(ctx context.Context, i int) {
			r.applyOne(ctx, items[i])
		}, func(i int) {
			items[i].result.Action, items[i].result.Message, items[i].done = Skipped, "not applied: "+ctx.Err().Error(), true
		})
		if s == stageDefinitions && !opts.DryRun {
			r.waitForCRDs(ctx, items)
		}
	}

	res := &Result{}
	declared := map[key]bool{}
	anyFailed := false
	for _, items := range stages {
		for _, it := range items {
			declared[it.ref.key()] = true
			res.Objects = append(res.Objects, it.result)
			switch {
			case it.entry != nil:
				res.Inventory = append(res.Inventory, *it.entry)
			case it.result.Action.KeepsPrevious():
				// Not applied now, but still in the cluster from before: keep managing it.
				if e, ok := r.prev[it.ref.key()]; ok {
					res.Inventory = append(res.Inventory, e)
				}
			}
			if it.result.Action == Failed || it.result.Action == Skipped {
				anyFailed = true
			}
			if it.result.Action == Created || it.result.Action == Configured {
				res.Changed++
			}
		}
	}

	var stale []InventoryEntry
	for _, e := range opts.Previous {
		if !declared[e.key()] {
			stale = append(stale, e)
		}
	}
	switch {
	case len(stale) == 0:
	case opts.Corrections:
		// Only the objects handed over are looked at: the rest stay as they are.
		res.Inventory = append(res.Inventory, stale...)
	case !opts.Prune:
		for _, e := range stale {
			res.Objects = append(res.Objects, ObjectResult{Ref: e.Ref, Action: Orphaned, Message: "no longer declared and pruning is off: left in place, no longer managed"})
		}
	case anyFailed:
		for _, e := range stale {
			res.Objects = append(res.Objects, ObjectResult{Ref: e.Ref, Action: Skipped, Message: "pruning postponed until every declared object applies"})
			res.Inventory = append(res.Inventory, e)
		}
	default:
		objs, kept, deleted := r.prune(ctx, stale)
		res.Objects = append(res.Objects, objs...)
		res.Inventory = append(res.Inventory, kept...)
		res.Changed += deleted
	}
	if opts.DryRun {
		res.Inventory = append([]InventoryEntry(nil), opts.Previous...)
		res.Changed = 0
	}
	logSummary(log, res)
	if err := ctx.Err(); err != nil {
		return res, fmt.Errorf("applying %d objects: %w", len(desired), err)
	}
	return res, nil
}

// applyOne decides whether it must be written and writes it.
func (r *run) applyOne(ctx context.Context, it *item) {
	if it.done {
		return
	}
	log := ctrl.LoggerFrom(ctx).WithValues("object", it.ref.String())
	if !it.liveKnown && r.opts.Corrections && r.opts.Live != nil {
		if u := r.opts.Live(it.ref); u != nil {
			it.live, it.liveKnown = u, true
		}
	}
	if !it.liveKnown {
		if err := r.readOne(ctx, it); err != nil {
			it.fail(fmt.Errorf("reading live object: %w", err))
			return
		}
	}
	if r.leftAsIs(it, log) || r.asApplied(ctx, it, log) {
		return
	}
	if r.opts.DryRun {
		r.dryRunOne(ctx, it)
		return
	}
	r.write(ctx, it, log)
}

// leftAsIs reports whether the live object is not Holdfast's to write, and says why in its
// result: created by someone else (unless adopted), declared differently by another service
// set, owned by one, exempt on the cluster, or on its way out.
func (r *run) leftAsIs(it *item, log logr.Logger) bool {
	if r.foreign(it) {
		if !r.opts.Adopt {
			it.result.Action, it.result.Foreign = Conflict, true
			it.result.Message = foreignMessage(it.live)
			it.done = true
			return true
		}
		it.adopted, it.result.Adopted = true, true
		log.Info("Adopting an object Holdfast did not create", "managers", managers(it.live, 3))
	}
	if it.live != nil && r.opts.Contend != nil {
		if other, ok := r.opts.Contend(it.ref, it.desiredDigest); !ok {
			it.result.Action, it.result.ConflictWith, it.result.DesiredDigest = Conflict, other, it.desiredDigest
			it.result.Message = fmt.Sprintf("declared differently by %s: left as it is", other)
			it.done = true
			return true
		}
	}
	if it.live != nil && r.opts.Claim != nil {
		if owner, ok := r.opts.Claim(it.live); !ok {
			it.result.Action, it.result.ConflictWith = Conflict, owner
			it.result.Message = fmt.Sprintf("owned by %s: left untouched", owner)
			it.done = true
			return true
		}
	}
	if it.live != nil && r.opts.Ignore != nil && r.opts.Ignore(it.live) {
		it.result.Action, it.result.Message = Ignored, "exempt on the cluster: left as it is"
		it.done = true
		return true
	}
	if it.live != nil && it.live.GetDeletionTimestamp() != nil && !r.opts.DryRun {
		// Applying to an object on its way out changes nothing lasting: it is written again
		// once it is gone.
		it.fail(fmt.Errorf("%w: %s since %s; applied again once it is gone", ErrBeingDeleted,
			it.ref.Kind, it.live.GetDeletionTimestamp().UTC().Format(time.RFC3339)))
		return true
	}
	return false
}

// asApplied reports whether the object is declared as at the last apply and is left as it is:
// the live object is as Holdfast left it (Unchanged), or it drifted and the drift policy does
// not correct it now (Drifted, Missing).
func (r *run) asApplied(ctx context.Context, it *item, log logr.Logger) bool {
	if prev, ok := r.previous(it); ok && !r.opts.Force && fieldset.SameDigest(prev.DesiredDigest, it.desiredDigest) {
		// Whether Holdfast knows what its last write left: then a change under its field
		// manager's name since is not its own (drift.Verdict.ResolveClaim).
		knowsOwn := prev.OwnedDigest != ""
		if it.live != nil {
			owned, err := fieldset.OwnedDigest(it.live, fieldset.FieldManager)
			knowsOwn = knowsOwn && err == nil
			// An empty digest means Holdfast owns nothing on the live object (someone replaced
			// it): never as applied, even when the entry holds no digest (Corrections).
			if err == nil && owned != "" && fieldset.SameDigest(owned, prev.OwnedDigest) {
				it.result.Action, it.result.Applied = Unchanged, !r.opts.DryRun
				it.current = it.live
				it.result.Health = r.health(it.live)
				it.entry = r.entry(it, owned)
				r.markAdopted(ctx, it, it.live)
				return true
			}
			if err != nil {
				log.V(1).Info("Cannot compute owned digest, re-applying", "error", err.Error())
			}
		}
		// Declared as before, but the cluster's copy changed or is gone: drift.
		it.result.Drift = true
		if !r.opts.DryRun && r.opts.Correct != nil && !r.opts.Correct(it.obj, it.live, r.verdict(it, knowsOwn)) {
			it.result.Action, it.result.Message = Drifted, "differs from the declaration; not corrected now"
			if it.live == nil {
				it.result.Action, it.result.Message = Missing, "deleted on the cluster; not recreated now"
			}
			it.done = true
			return true
		}
	}
	return false
}

// write applies the object with Holdfast's field manager (fields another manager is left
// leaves out), re-creating it when the policy says so and an immutable field changes.
func (r *run) write(ctx context.Context, it *item, log logr.Logger) {
	obj := it.obj.DeepCopy()
	if it.live != nil && r.opts.IgnoredFields != nil {
		if dropped := leaveOut(obj, it.live, r.opts.IgnoredFields(it.obj)); len(dropped) > 0 {
			log.V(1).Info("Leaving fields to another field manager", "fields", dropped)
		}
	}
	replaced, err := r.restoreReplaced(ctx, it)
	if err != nil {
		it.fail(err)
		log.Info("Object not corrected", "error", it.result.Message, "transient", it.result.Transient)
		return
	}
	err = r.a.client.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj), client.ForceOwnership, client.FieldOwner(fieldset.FieldManager))
	if err == nil && len(replaced) > 0 {
		err = r.patchItems(ctx, it, replaced, "remove")
	}
	if fields := ImmutableFields(err); len(fields) > 0 && r.opts.Recreate != nil && r.opts.Recreate(it.obj) {
		if err = r.recreate(ctx, it, obj); err == nil {
			it.live, it.result.Recreated, it.result.ImmutableFields = nil, true, fields
			log.Info("Re-created object: its immutable fields change", "fields", fields, "drift", it.result.Drift)
		}
	}
	if err != nil {
		it.fail(err)
		log.Info("Object not applied", "error", it.result.Message, "transient", it.result.Transient)
		return
	}
	owned, err := fieldset.OwnedDigest(obj, fieldset.FieldManager)
	if err != nil {
		// The object is applied; an empty digest only means it is re-applied next time.
		log.Info("Cannot compute owned digest", "error", err.Error())
	}
	it.current = obj
	it.result.Applied, it.result.Health = true, r.health(obj)
	it.entry = r.entry(it, owned)
	r.markAdopted(ctx, it, obj)
	switch {
	case it.live == nil:
		it.result.Action = Created
	case it.live.GetResourceVersion() == obj.GetResourceVersion():
		it.result.Action, it.result.Message = Unchanged, "re-applied, no change"
	default:
		it.result.Action = Configured
	}
	log.V(1).Info("Applied object", "action", it.result.Action)
}

// entry is the inventory entry of an applied item; it stays Adopted once it was.
func (r *run) entry(it *item, owned string) *InventoryEntry {
	return &InventoryEntry{Ref: it.ref, DesiredDigest: it.desiredDigest, OwnedDigest: owned,
		Adopted: it.adopted || r.prev[it.ref.key()].Adopted}
}

// previous returns the inventory entry of it from the last apply. With Options.Corrections an
// object without one was applied as declared now, which is all the entry would say.
func (r *run) previous(it *item) (InventoryEntry, bool) {
	if prev, ok := r.prev[it.ref.key()]; ok || !r.opts.Corrections {
		return prev, ok
	}
	return InventoryEntry{Ref: it.ref, DesiredDigest: it.desiredDigest}, true
}

// verdict is drift's verdict on an object whose live copy is no longer as last applied, while
// its declaration is as then. knowsOwn: the inventory records the owned digest Holdfast's last
// write left, which the live object no longer has, so a change held by Holdfast's field
// manager was made by someone else under its name; without that record it is taken for
// Holdfast's own (it is re-applied all the same).
func (r *run) verdict(it *item, knowsOwn bool) drift.Verdict {
	var ignored []string
	if r.opts.IgnoredFields != nil {
		ignored = r.opts.IgnoredFields(it.obj)
	}
	return drift.Decide(drift.Declaration(it.obj), it.live, ignored).ResolveClaim(!knowsOwn)
}

// readOne gets the live object of it; a missing object is not an error.
func (r *run) readOne(ctx context.Context, it *item) error {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(it.ref.GroupVersionKind())
	err := r.a.client.Get(ctx, client.ObjectKey{Namespace: it.ref.Namespace, Name: it.ref.Name}, u)
	switch {
	case apierrors.IsNotFound(err):
		it.live = nil
	case err != nil:
		return err
	default:
		it.live = u
	}
	it.liveKnown = true
	return nil
}

// plan copies, validates and stages the declared objects. Invalid and duplicate objects are
// returned already failed.
func (r *run) plan(desired []*unstructured.Unstructured) [numStages][]*item {
	var stages [numStages][]*item
	seen := map[key]bool{}
	for _, d := range desired {
		if d == nil {
			continue
		}
		obj := d.DeepCopy()
		it := &item{obj: obj, ref: RefOf(obj)}
		it.result.Ref = it.ref
		it.stage, it.tier = stageOf(obj), tierOf(obj)
		switch {
		case obj.GetAPIVersion() == "" || obj.GetKind() == "" || obj.GetName() == "":
			it.fail(fmt.Errorf("%w: apiVersion, kind and metadata.name are required", ErrInvalidObject))
		case it.ref.Version == "":
			it.fail(fmt.Errorf("%w: apiVersion %q has no version", ErrInvalidObject, obj.GetAPIVersion()))
		default:
			utils.SetCommonMetadata([]*unstructured.Unstructured{obj}, r.opts.Labels, r.opts.Annotations)
			utils.RemoveCABundleFromCRD(obj)
			secretStringDataToData(obj)
			if utils.IsCRD(obj) {
				r.noteCRD(obj)
			}
		}
		if !it.done && obj.GetNamespace() != "" {
			k := it.ref.key()
			if seen[k] {
				it.fail(fmt.Errorf("%w: %s is declared more than once", ErrDuplicate, it.ref))
			}
			seen[k] = true
		}
		stages[it.stage] = append(stages[it.stage], it)
	}
	return stages
}

// noteCRD records the kind a declared CRD defines.
func (r *run) noteCRD(crd *unstructured.Unstructured) {
	group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
	kind, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "kind")
	scope, _, _ := unstructured.NestedString(crd.Object, "spec", "scope")
	if kind != "" {
		r.crdKinds[schema.GroupKind{Group: group, Kind: kind}] = scope != "Cluster"
	}
}

// resolve maps each item to its resource, defaults or clears its namespace, checks its size and
// computes its desired digest. Duplicates whose namespace was defaulted are caught here.
func (r *run) resolve(ctx context.Context, items []*item) {
	seen := map[key]bool{}
	for _, it := range items {
		if it.done {
			continue
		}
		gvk := it.obj.GroupVersionKind()
		namespaced, unserved, err := r.namespaced(ctx, gvk)
		if unserved {
			// Dry run of a custom resource whose CRD this set would create: nothing to read,
			// nothing the server can check yet.
			it.unvalidated = "not validated by the API server: its CustomResourceDefinition is created by this set"
			it.live, it.liveKnown = nil, true
		}
		if err != nil {
			it.fail(err)
			r.matchPrevious(it)
			continue
		}
		if namespaced {
			if it.obj.GetNamespace() == "" {
				it.obj.SetNamespace(r.opts.DefaultNamespace)
			}
			if it.obj.GetNamespace() == "" {
				it.fail(fmt.Errorf("%w: %s is namespaced; set metadata.namespace or a target namespace", ErrNoNamespace, it.ref))
				continue
			}
		} else {
			it.obj.SetNamespace("")
		}
		it.ref = RefOf(it.obj)
		it.result.Ref = it.ref
		if seen[it.ref.key()] {
			it.fail(fmt.Errorf("%w: %s is declared more than once", ErrDuplicate, it.ref))
			continue
		}
		seen[it.ref.key()] = true
		d, size, err := desiredDigest(it.obj)
		if err != nil {
			it.fail(fmt.Errorf("%w: %w", ErrInvalidObject, err))
			continue
		}
		it.desiredDigest = d
		if size > MaxObjectSize {
			it.fail(fmt.Errorf("%w: %s is %d bytes, over the %d-byte limit", ErrTooLarge, it.ref, size, MaxObjectSize))
		}
	}
}

// matchPrevious gives an object that failed before its scope was known the namespace it had in
// the inventory, so that the inventory keeps tracking it instead of losing it.
func (r *run) matchPrevious(it *item) {
	if it.ref.Namespace != "" || r.opts.DefaultNamespace == "" {
		return
	}
	withNS := it.ref
	withNS.Namespace = r.opts.DefaultNamespace
	if _, ok := r.prev[withNS.key()]; ok {
		it.ref = withNS
		it.result.Ref = withNS
	}
}

// namespaced reports whether gvk is namespaced. Kinds defined by a CRD of this set are waited
// for briefly (discovery can trail the CRD's Established condition) and, in a dry run, taken
// from the CRD itself (unserved is then true).
func (r *run) namespaced(ctx context.Context, gvk schema.GroupVersionKind) (namespaced, unserved bool, err error) {
	ns, fromSet := r.crdKinds[gvk.GroupKind()]
	deadline := time.Now().Add(5 * time.Second)
	for {
		mapping, err := r.a.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err == nil {
			return mapping.Scope.Name() == meta.RESTScopeNameNamespace, false, nil
		}
		if !meta.IsNoMatchError(err) {
			return false, false, fmt.Errorf("resolving %s: %w", gvk, err)
		}
		if !fromSet {
			return false, false, unknownKindError(gvk, err)
		}
		if r.opts.DryRun {
			return ns, true, nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return false, false, unknownKindError(gvk, err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(r.a.pollInterval):
		}
	}
}

// forEachTier calls fn for every index in [0,n), tier by tier in order (tierOf must be
// non-decreasing), up to the Applier's concurrency at once within a tier. Once ctx ends, skip
// is called for the indices not yet started instead.
func (r *run) forEachTier(ctx context.Context, n int, tierOf func(int) int, fn func(context.Context, int), skip func(int)) {
	sem := make(chan struct{}, r.a.concurrency)
	for start := 0; start < n; {
		end := start + 1
		for end < n && tierOf(end) == tierOf(start) {
			end++
		}
		var wg sync.WaitGroup
		for i := start; i < end; i++ {
			if ctx.Err() != nil {
				skip(i)
				continue
			}
			sem <- struct{}{}
			wg.Add(1)
			go func() {
				defer func() { <-sem; wg.Done() }()
				fn(ctx, i)
			}()
		}
		wg.Wait()
		start = end
	}
}

// logSummary logs one line per call with the count of each action.
func logSummary(log logr.Logger, res *Result) {
	counts := map[Action]int{}
	for _, o := range res.Objects {
		counts[o.Action]++
	}
	kv := []any{"objects", len(res.Objects), "changed", res.Changed}
	for _, a := range []Action{Created, Configured, Unchanged, Deleted, Conflict, Failed, Skipped, Ignored, WouldCreate, WouldUpdate, WouldDelete, Orphaned} {
		if counts[a] > 0 {
			kv = append(kv, string(a), counts[a])
		}
	}
	log.Info("Applied object set", kv...)
}

// secretStringDataToData moves a Secret's stringData into data, base64-encoded, as the API
// server would. stringData is write-only: applied as is, Holdfast would own fields the live
// object never shows, so a change to the Secret's data could not be seen as drift.
func secretStringDataToData(obj *unstructured.Unstructured) {
	if obj.GetKind() != "Secret" || obj.GroupVersionKind().Group != "" {
		return
	}
	sd, ok := obj.Object["stringData"].(map[string]any)
	if !ok || len(sd) == 0 {
		return
	}
	data, _ := obj.Object["data"].(map[string]any)
	if data == nil {
		data = map[string]any{}
	}
	for k, v := range sd {
		if s, ok := v.(string); ok {
			data[k] = base64.StdEncoding.EncodeToString([]byte(s))
		}
	}
	obj.Object["data"] = data
	delete(obj.Object, "stringData")
}
