package drift

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestSnapshotsAreSmall: what the compactor keeps per object does not grow with the object (here
// a large status and other managers' fields) and stays well under a kilobyte for a ConfigMap.
func TestSnapshotsAreSmall(t *testing.T) {
	const n = 10000
	objs := make([]*unstructured.Unstructured, n)
	for i := range objs {
		u := configMap(t, fmt.Sprintf("0b6a1c2e-1111-2222-3333-%012d", i), fmt.Sprint(1000+i), fmt.Sprintf("value-%d", i), "", otherOwnsTheirs)
		u.SetName(fmt.Sprintf("config-%04d", i))
		u.Object["status"] = map[string]any{"notes": strings.Repeat("x", 2000)}
		objs[i] = u
	}
	c := NewCompactor()
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	before := ms.HeapAlloc
	snapshots := make([]any, n)
	for i, u := range objs {
		snapshots[i], _ = c.Transform(u)
	}
	runtime.GC()
	runtime.ReadMemStats(&ms)
	perObject := (int64(ms.HeapAlloc) - int64(before)) / n
	runtime.KeepAlive(objs)
	runtime.KeepAlive(snapshots)
	t.Logf("%d bytes per snapshot, the compactor's map included", perObject)
	if perObject > 600 {
		t.Fatalf("%d bytes per snapshot, want at most 600", perObject)
	}
}
