package drift

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"
)

// fakeServer serves one kind's objects to an informer, as an API server would: a list, or a
// streamed list (watch with sendInitialEvents) when streaming, then a watch that the test feeds
// and can break.
type fakeServer struct {
	streaming bool

	mu      sync.Mutex
	objects map[string]*unstructured.Unstructured
	rv      int
	watcher *watch.RaceFreeFakeWatcher
	opened  chan struct{}
	lists   int // lists served, streamed or not
}

func newFakeServer(streaming bool) *fakeServer {
	return &fakeServer{streaming: streaming, objects: map[string]*unstructured.Unstructured{}, opened: make(chan struct{}, 10)}
}

// IsWatchListSemanticsUnSupported makes client-go list, then watch, unless streaming.
func (f *fakeServer) IsWatchListSemanticsUnSupported() bool { return !f.streaming }

func (f *fakeServer) List(opts metav1.ListOptions) (runtime.Object, error) {
	return f.ListWithContext(context.Background(), opts)
}

func (f *fakeServer) Watch(opts metav1.ListOptions) (watch.Interface, error) {
	return f.WatchWithContext(context.Background(), opts)
}

func (f *fakeServer) ListWithContext(_ context.Context, _ metav1.ListOptions) (runtime.Object, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.streaming {
		return nil, fmt.Errorf("asked for a list while streaming")
	}
	f.lists++
	l := &unstructured.UnstructuredList{}
	l.SetAPIVersion("v1")
	l.SetKind("ConfigMapList")
	l.SetResourceVersion(strconv.Itoa(f.rv))
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range f.objects {
			if !yield(k) {
				return
			}
		}
	}) {
		l.Items = append(l.Items, *f.objects[k].DeepCopy())
	}
	return l, nil
}

func (f *fakeServer) WatchWithContext(_ context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	w := watch.NewRaceFreeFake()
	if opts.SendInitialEvents != nil && *opts.SendInitialEvents {
		f.lists++
		for _, o := range f.objects {
			w.Add(o.DeepCopy())
		}
		end := &unstructured.Unstructured{}
		end.SetAPIVersion("v1")
		end.SetKind("ConfigMap")
		end.SetResourceVersion(strconv.Itoa(f.rv))
		end.SetAnnotations(map[string]string{metav1.InitialEventsAnnotationKey: "true"})
		w.Action(watch.Bookmark, end)
	}
	f.watcher = w
	f.opened <- struct{}{}
	return w, nil
}

// set stores obj at the next resourceVersion, and sends the event unless the watch is down.
func (f *fakeServer) set(obj *unstructured.Unstructured, send bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rv++
	obj.SetResourceVersion(strconv.Itoa(f.rv))
	_, existed := f.objects[obj.GetName()]
	f.objects[obj.GetName()] = obj
	if !send {
		return
	}
	if existed {
		f.watcher.Modify(obj.DeepCopy())
	} else {
		f.watcher.Add(obj.DeepCopy())
	}
}

func (f *fakeServer) remove(name string, send bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rv++
	obj := f.objects[name]
	delete(f.objects, name)
	obj.SetResourceVersion(strconv.Itoa(f.rv))
	if send {
		f.watcher.Delete(obj.DeepCopy())
	}
}

// expire ends the watch the way an API server does when the informer's resourceVersion is too
// old: the informer must list again.
func (f *fakeServer) expire() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.watcher.Error(&apierrors.NewResourceExpired("too old resource version").ErrStatus)
}

// named is a configMap renamed.
func named(u *unstructured.Unstructured, name string) *unstructured.Unstructured {
	u.SetName(name)
	u.SetUID(types.UID("uid-" + name))
	return u
}

// TestChangesWhileTheWatchWasDown: changes and deletions that happen while the watch is broken
// are reported after the informer lists again, from the compact snapshots alone; what did not
// change is not reported. Both ways client-go lists are covered: a List, and a streamed list.
func TestChangesWhileTheWatchWasDown(t *testing.T) {
	for _, streaming := range []bool{false, true} {
		t.Run(fmt.Sprintf("streaming=%v", streaming), func(t *testing.T) {
			server := newFakeServer(streaming)
			for _, name := range []string{"a", "b", "c", "d"} {
				server.set(named(configMap(t, "", "", "declared", ""), name), false)
			}
			changes := make(chan Change, 100)
			w := &Watches{OnChange: func(_ types.NamespacedName, c Change) { changes <- c }}
			example := &unstructured.Unstructured{}
			example.SetAPIVersion("v1")
			example.SetKind("ConfigMap")
			inf := toolscache.NewSharedIndexInformer(server, example, 0, toolscache.Indexers{})
			compactor := NewCompactor()
			if err := inf.SetTransform(compactor.Transform); err != nil {
				t.Fatal(err)
			}
			if _, err := inf.AddEventHandler(w.handler(types.NamespacedName{Name: "cluster-1"})); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go inf.RunWithContext(ctx)
			if !toolscache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
				t.Fatal("informer did not sync")
			}
			<-server.opened

			t.Log("While watching: an edit and a deletion")
			server.set(named(configMap(t, "", "", "edited-live", "", kubectlOwnsValue), "a"), true)
			server.remove("d", true)
			expectChanges(t, changes, "a changed [.data.value: \"declared\" -> \"edited-live\"] by kubectl-edit", "d deleted")

			t.Log("While the watch is down: an edit, a change that is not drift, a deletion")
			server.set(named(configMap(t, "", "", "edited-offline", "", kubectlOwnsValue), "b"), false)
			server.set(named(configMap(t, "", "", "declared", "", otherOwnsTheirs), "c"), false)
			server.remove("a", false)
			server.expire()
			select {
			case <-server.opened:
			case <-time.After(10 * time.Second):
				t.Fatal("the informer did not watch again")
			}
			expectChanges(t, changes, "a deleted", "b changed [.data.value: \"declared\" -> \"edited-offline\"] by kubectl-edit")

			if server.lists != 2 {
				t.Fatalf("%d lists, want 2", server.lists)
			}
			for _, o := range inf.GetStore().List() {
				if _, ok := o.(*Snapshot); !ok {
					t.Fatalf("the store holds a %T", o)
				}
			}
			if n := len(compactor.last); n != 2 {
				t.Fatalf("the compactor remembers %d objects, want 2 (b and c)", n)
			}
		})
	}
}

// expectChanges waits for the changes described by want, in any order, and for no more.
func expectChanges(t *testing.T, changes chan Change, want ...string) {
	t.Helper()
	var got []string
	deadline := time.After(10 * time.Second)
	for len(got) < len(want) {
		select {
		case c := <-changes:
			got = append(got, describeChange(c))
		case <-deadline:
			t.Fatalf("changes %q, want %q", got, want)
		}
	}
	select {
	case c := <-changes:
		got = append(got, describeChange(c))
	case <-time.After(300 * time.Millisecond):
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("changes %q, want %q", got, want)
	}
}

func describeChange(c Change) string {
	if c.Object.GetAnnotations()["holdfast.dev/multiclusterservice"] != "shop" || c.Object.GetLabels()["holdfast.dev/service"] != "web" {
		return fmt.Sprintf("%s without its owner and service: %v", c.Object.GetName(), c.Object.Object)
	}
	if c.Deleted {
		return c.Object.GetName() + " deleted"
	}
	s := c.Object.GetName() + " changed ["
	for i, f := range c.Fields {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%s: %s -> %s", f.Path, f.Old, f.New)
	}
	return s + "] by " + c.Author.Manager
}

// TestUpdatesThatAreNotDrift: an update of a watched object that changes nothing Holdfast owns
// (another manager's field, the status its controller writes) goes to OnUpdate, with the
// object's owner, not to OnChange; a drift goes to OnChange only.
func TestUpdatesThatAreNotDrift(t *testing.T) {
	server := newFakeServer(false)
	server.set(named(configMap(t, "", "", "declared", ""), "a"), false)
	server.set(named(configMap(t, "", "", "declared", ""), "b"), false)
	changes := make(chan Change, 10)
	updates := make(chan string, 10)
	w := &Watches{
		OnChange: func(_ types.NamespacedName, c Change) { changes <- c },
		OnUpdate: func(_ types.NamespacedName, o *unstructured.Unstructured) {
			updates <- o.GetName() + " of " + o.GetAnnotations()["holdfast.dev/multiclusterservice"]
		},
	}
	example := &unstructured.Unstructured{}
	example.SetAPIVersion("v1")
	example.SetKind("ConfigMap")
	inf := toolscache.NewSharedIndexInformer(server, example, 0, toolscache.Indexers{})
	if err := inf.SetTransform(NewCompactor().Transform); err != nil {
		t.Fatal(err)
	}
	if _, err := inf.AddEventHandler(w.handler(types.NamespacedName{Name: "cluster-1"})); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go inf.RunWithContext(ctx)
	if !toolscache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		t.Fatal("informer did not sync")
	}
	<-server.opened
	// Objects that appear (here, the first list) are reported too: one re-created by hand
	// after its deletion was reported may end that drift.
	appeared := map[string]bool{}
	for range 2 {
		select {
		case u := <-updates:
			appeared[u] = true
		case <-time.After(10 * time.Second):
			t.Fatal("the objects listed were not reported to OnUpdate")
		}
	}
	if !appeared["a of shop"] || !appeared["b of shop"] {
		t.Fatalf("listed objects reported: %v, want a and b of shop", appeared)
	}

	server.set(named(configMap(t, "", "", "declared", "", otherOwnsTheirs), "b"), true)
	select {
	case u := <-updates:
		if u != "b of shop" {
			t.Fatalf("OnUpdate got %q, want b of shop", u)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("an update that is not drift was not reported to OnUpdate")
	}
	server.set(named(configMap(t, "", "", "edited-live", "", kubectlOwnsValue), "a"), true)
	expectChanges(t, changes, "a changed [.data.value: \"declared\" -> \"edited-live\"] by kubectl-edit")
	select {
	case u := <-updates:
		t.Fatalf("a drift also went to OnUpdate: %q", u)
	default:
	}
}
