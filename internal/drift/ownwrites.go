package drift

import (
	"context"
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"holdfast.dev/holdfast/internal/fieldset"
)

// OwnWrites is what this process knows of its own writes on target clusters, so that a change
// held by Holdfast's field manager (Verdict.Claimed) is taken for Holdfast's own only when
// Holdfast made it: anyone who may update an object may also write under the manager name
// "holdfast". For each object Holdfast wrote it keeps the resourceVersions its latest writes
// returned, the owned digest (fieldset.OwnedDigest) the latest left, and how many of its
// writes are under way. A version is Holdfast's when it is one of those resourceVersions (a
// watch delivers every version), or its owned fields are as Holdfast's latest write left them
// (a relist after a broken watch skips versions). resourceVersions are no identity across
// etcd compaction or restarts, but these live only in memory, for as long as the watch that
// compares them; after a restart the apply path tells Holdfast's writes by the owned digest
// the inventory records.
//
// Entries are kept per object Holdfast writes (what it manages), at most ownRVs versions each,
// and dropped when the object is deleted (Forget) or the cluster's connection closes
// (ForgetCluster). It is safe for concurrent use.
type OwnWrites struct {
	mu      sync.Mutex
	objects map[ownKey]*ownEntry
}

// ownRVs is how many of an object's latest resourceVersions Holdfast wrote are kept: writes in
// quick succession (a correction right after a deployment) whose watch events arrive after the
// next write returned.
const ownRVs = 4

type ownKey struct {
	cluster                      types.NamespacedName
	group, kind, namespace, name string
}

type ownEntry struct {
	writing int
	rvs     [ownRVs]string
	next    int
	digest  string
	// waiting are the judgments of versions seen while writes were under way (JudgeOrWait).
	waiting []waitingJudgment
}

// waitingJudgment is a version of an object (its resourceVersion and owned digest) to judge once
// the writes under way are done, and what to call then.
type waitingJudgment struct {
	rv, digest string
	then       func(Ownership)
}

// maxWaiting bounds the judgments waiting on one object's writes: past it, JudgeOrWait answers
// Unsure and the caller compares.
const maxWaiting = 16

// Ownership is whether a version of an object is Holdfast's own write.
type Ownership int

const (
	// NotOwn: no write of Holdfast's made it, and none is under way.
	NotOwn Ownership = iota
	// Own: Holdfast's write made it, or left its owned fields as they are.
	Own
	// Unsure: a write of Holdfast's to the object is under way, whose answer has not come back;
	// the version may be its. The caller compares once the write is done.
	Unsure
)

func keyOf(cluster types.NamespacedName, gvk schema.GroupVersionKind, namespace, name string) ownKey {
	return ownKey{cluster: cluster, group: gvk.Group, kind: gvk.Kind, namespace: namespace, name: name}
}

// Judge says whether the version obj of an object on cluster (its identity and
// resourceVersion, as a Change carries it), whose owned digest is digest, is Holdfast's own
// write.
func (o *OwnWrites) Judge(cluster types.NamespacedName, obj *unstructured.Unstructured, digest string) Ownership {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.judgeLocked(o.objects[keyOf(cluster, obj.GroupVersionKind(), obj.GetNamespace(), obj.GetName())], obj.GetResourceVersion(), digest)
}

func (o *OwnWrites) judgeLocked(e *ownEntry, rv, digest string) Ownership {
	switch {
	case e == nil:
		return NotOwn
	case rv != "" && slices.Contains(e.rvs[:], rv):
		return Own
	case digest != "" && digest == e.digest:
		return Own
	case e.writing > 0:
		return Unsure
	}
	return NotOwn
}

// JudgeOrWait is Judge, except that a version it is unsure of waits for the writes under way
// instead of being compared with the cluster: the watch often sees Holdfast's write before the
// write's answer comes back (a busy API server), and a comparison would cost a reconcile.
// waiting is true when it does: then is called once they are done, from the goroutine that
// ended the last, with Own when one of them returned that version or left that owned digest,
// NotOwn otherwise. It must not block. When too many versions of the object wait already, the
// answer is Unsure and then is not called: the caller compares.
func (o *OwnWrites) JudgeOrWait(cluster types.NamespacedName, obj *unstructured.Unstructured, digest string, then func(Ownership)) (_ Ownership, waiting bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	e := o.objects[keyOf(cluster, obj.GroupVersionKind(), obj.GetNamespace(), obj.GetName())]
	verdict := o.judgeLocked(e, obj.GetResourceVersion(), digest)
	if verdict != Unsure || len(e.waiting) >= maxWaiting {
		return verdict, false
	}
	e.waiting = append(e.waiting, waitingJudgment{rv: obj.GetResourceVersion(), digest: digest, then: then})
	return Unsure, true
}

// Superseded reports whether Holdfast wrote the object (of kind gvk, on cluster) after its
// version rv, a resourceVersion a watch or a comparison reported: that version is gone, put
// back or replaced by Holdfast's write, so a report of it arriving now (a watch behind, the
// twin of a record a comparison made before correcting) is no new drift. resourceVersions are
// compared as the API defines it (resourceversion.CompareResourceVersion, KEP-5504); when
// either is not a well-formed one, false: the report is taken as new.
func (o *OwnWrites) Superseded(cluster types.NamespacedName, gvk schema.GroupVersionKind, namespace, name, rv string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	e := o.objects[keyOf(cluster, gvk, namespace, name)]
	return e != nil && e.writtenAfter(rv)
}

// writtenAfter reports whether one of the writes e keeps returned a version after rv.
func (e *ownEntry) writtenAfter(rv string) bool {
	for _, w := range e.rvs {
		if NewerVersion(w, rv) {
			return true
		}
	}
	return false
}

// NewerVersion reports whether resourceVersion a of an object is after b; false when either
// is not a well-formed resourceVersion (an empty one included).
func NewerVersion(a, b string) bool {
	c, err := resourceversion.CompareResourceVersion(a, b)
	return err == nil && c > 0
}

// Forget drops what is known of an object that is gone: obj is the version deleted. What
// Holdfast wrote after it (it re-created the object before the deletion's watch event
// arrived) is kept.
func (o *OwnWrites) Forget(cluster types.NamespacedName, obj *unstructured.Unstructured) {
	o.mu.Lock()
	defer o.mu.Unlock()
	k := keyOf(cluster, obj.GroupVersionKind(), obj.GetNamespace(), obj.GetName())
	if e := o.objects[k]; e != nil && e.writing == 0 && !e.writtenAfter(obj.GetResourceVersion()) {
		delete(o.objects, k)
	}
}

// ForgetCluster drops what is known of a cluster's objects (its connection closed: the
// watches that compare are gone with it).
func (o *OwnWrites) ForgetCluster(cluster types.NamespacedName) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for k, e := range o.objects {
		if k.cluster == cluster && e.writing == 0 {
			delete(o.objects, k)
		}
	}
}

// begin notes a write under way and returns its entry's key.
func (o *OwnWrites) begin(k ownKey) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.objects == nil {
		o.objects = map[ownKey]*ownEntry{}
	}
	e := o.objects[k]
	if e == nil {
		e = &ownEntry{}
		o.objects[k] = e
	}
	e.writing++
}

// end notes a write done: when it succeeded, the version it returned (rv) and the owned digest
// it left ("" when not known).
// The judgments waiting on the object that can be made now are, after the lock is released.
func (o *OwnWrites) end(k ownKey, ok bool, rv, digest string) {
	o.mu.Lock()
	e := o.objects[k]
	if e == nil {
		o.mu.Unlock()
		return
	}
	e.writing--
	if ok && rv != "" {
		e.rvs[e.next] = rv
		e.next = (e.next + 1) % ownRVs
		e.digest = digest
	}
	type judged struct {
		then    func(Ownership)
		verdict Ownership
	}
	var done []judged
	still := e.waiting[:0]
	for _, w := range e.waiting {
		switch v := o.judgeLocked(e, w.rv, w.digest); v {
		case Unsure:
			still = append(still, w)
		default:
			done = append(done, judged{w.then, v})
		}
	}
	clear(e.waiting[len(still):])
	e.waiting = still
	o.mu.Unlock()
	for _, j := range done {
		j.then(j.verdict)
	}
}

// Client returns c, a client of cluster, noting every write made through it (apply, patch,
// update, create) as Holdfast's own. Every write Holdfast makes to a service set's objects goes
// through such a client.
func (o *OwnWrites) Client(cluster types.NamespacedName, c client.Client) client.Client {
	return &ownWritesClient{Client: c, own: o, cluster: cluster}
}

type ownWritesClient struct {
	client.Client
	own     *OwnWrites
	cluster types.NamespacedName
}

// unstructuredContent is what an apply configuration made of an unstructured object
// (client.ApplyConfigurationFromUnstructured) has, its content updated by the answer.
type unstructuredContent interface {
	UnstructuredContent() map[string]any
}

func (w *ownWritesClient) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
	u, ok := obj.(unstructuredContent)
	if !ok {
		return w.Client.Apply(ctx, obj, opts...)
	}
	// The content is read again after the call: the answer updated it.
	written := func() runtime.Object { return &unstructured.Unstructured{Object: u.UnstructuredContent()} }
	return w.write(written, func() error { return w.Client.Apply(ctx, obj, opts...) })
}

func (w *ownWritesClient) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	return w.write(func() runtime.Object { return obj }, func() error { return w.Client.Patch(ctx, obj, patch, opts...) })
}

func (w *ownWritesClient) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	return w.write(func() runtime.Object { return obj }, func() error { return w.Client.Update(ctx, obj, opts...) })
}

func (w *ownWritesClient) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	return w.write(func() runtime.Object { return obj }, func() error { return w.Client.Create(ctx, obj, opts...) })
}

// write makes one of Holdfast's writes: the object (as written() returns it before and after)
// is marked as being written while call runs, then recorded with what the answer left.
func (w *ownWritesClient) write(written func() runtime.Object, call func() error) error {
	k := w.key(written())
	w.own.begin(k)
	err := call()
	w.done(k, err, written())
	return err
}

// key identifies obj; its kind comes from the object or, for a typed one, the client's scheme.
func (w *ownWritesClient) key(obj runtime.Object) ownKey {
	gvk := obj.GetObjectKind().GroupVersionKind()
	if gvk.Empty() {
		gvk, _ = w.GroupVersionKindFor(obj)
	}
	m, _ := obj.(interface {
		GetNamespace() string
		GetName() string
	})
	if m == nil {
		return keyOf(w.cluster, gvk, "", "")
	}
	return keyOf(w.cluster, gvk, m.GetNamespace(), m.GetName())
}

// done records the end of a write of obj, with the version it returned and, for an
// unstructured object, the owned digest it left.
func (w *ownWritesClient) done(k ownKey, err error, obj runtime.Object) {
	rv, digest := "", ""
	if err == nil {
		if m, ok := obj.(interface{ GetResourceVersion() string }); ok {
			rv = m.GetResourceVersion()
		}
		if u, ok := obj.(*unstructured.Unstructured); ok {
			digest, _ = fieldset.OwnedDigest(u, fieldset.FieldManager)
		}
	}
	w.own.end(k, err == nil, rv, digest)
}
