package apply_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/fluxcd/pkg/ssa/utils"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"holdfast.dev/holdfast/internal/apply"
	"holdfast.dev/holdfast/internal/testsupport"
)

var ownerLabels = map[string]string{"holdfast.dev/managed-by": "holdfast", "holdfast.dev/owner": "mcs-a"}

// objects parses multi-document YAML, formatted with args.
func objects(t *testing.T, format string, args ...any) []*unstructured.Unstructured {
	t.Helper()
	objs, err := utils.ReadObjects(strings.NewReader(fmt.Sprintf(format, args...)))
	if err != nil {
		t.Fatalf("parsing manifests: %v", err)
	}
	return objs
}

func newApplier(t *testing.T) (*apply.Applier, *writeCounter) {
	t.Helper()
	c, counter, err := newClient(target.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	return apply.New(c), counter
}

// live reads an object with the admin client; nil if it does not exist.
func live(t *testing.T, apiVersion, kind, ns, name string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	err := admin.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, u)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatalf("reading %s %s/%s: %v", kind, ns, name, err)
	}
	return u
}

func apiVersion(r apply.Ref) string {
	return schema.GroupVersion{Group: r.Group, Version: r.Version}.String()
}

func actions(res *apply.Result) map[string]apply.Action {
	m := map[string]apply.Action{}
	for _, o := range res.Objects {
		m[o.Kind+"/"+o.Name] = o.Action
	}
	return m
}

func crd(group string) string {
	return "\n" + testsupport.CRD(group, "Widget")
}

const deployment = `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: app
        image: nginx:1
`

func cleanupCluster(t *testing.T, objs ...string) {
	t.Cleanup(func() {
		for _, o := range objs {
			parts := strings.SplitN(o, "/", 3)
			u := &unstructured.Unstructured{}
			u.SetAPIVersion(parts[0])
			u.SetKind(parts[1])
			u.SetName(parts[2])
			_ = admin.Delete(context.Background(), u)
		}
	})
}

func TestApplyCreatesThenWritesOnlyWhatChanged(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	own := ns + "-own"
	group := "create.test.holdfast.dev"
	cleanupCluster(t, "v1/Namespace/"+own, "apiextensions.k8s.io/v1/CustomResourceDefinition/widgets."+group,
		"rbac.authorization.k8s.io/v1/ClusterRole/"+ns)
	set := func(data string) []*unstructured.Unstructured {
		return objects(t, `
apiVersion: %[2]s/v1
kind: Widget
metadata: {name: w1}
spec: {size: 3}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: cfg}
data: {key: %[4]s}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: cfg2}
data: {key: two}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: cfg, namespace: %[3]s}
data: {key: own}
---
apiVersion: v1
kind: Secret
metadata: {name: creds}
stringData: {password: hunter2}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: %[1]s}
rules: [{apiGroups: [""], resources: [configmaps], verbs: [get]}]
---
apiVersion: v1
kind: Namespace
metadata: {name: %[3]s}
---
%[5]s
---
%[6]s
`, ns, group, own, data, deployment, crd(group))
	}

	a, counter := newApplier(t)
	opts := apply.Options{DefaultNamespace: ns, Labels: ownerLabels, Annotations: map[string]string{"holdfast.dev/service": "web"}}
	res, err := a.Apply(ctx, set("one"), opts)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Err()).NotTo(HaveOccurred())
	g.Expect(res.Objects).To(HaveLen(9))
	for _, o := range res.Objects {
		g.Expect(o.Action).To(Equal(apply.Created), o.Ref.String())
		g.Expect(o.Applied).To(BeTrue(), o.Ref.String())
	}
	g.Expect(res.Changed).To(Equal(9))
	g.Expect(res.Inventory).To(HaveLen(9))
	// Definitions first: the CRD and Namespace precede the objects that need them.
	g.Expect(res.Objects[0].Kind).To(Equal("CustomResourceDefinition"))
	g.Expect(res.Objects[len(res.Objects)-1].Kind).To(Equal("Widget"))

	w := live(t, group+"/v1", "Widget", ns, "w1")
	g.Expect(w).NotTo(BeNil(), "the custom resource got the default namespace")
	for _, o := range res.Inventory {
		u := live(t, apiVersion(o.Ref), o.Kind, o.Namespace, o.Name)
		g.Expect(u).NotTo(BeNil(), o.Ref.String())
		for k, v := range ownerLabels {
			g.Expect(u.GetLabels()).To(HaveKeyWithValue(k, v), o.Ref.String())
		}
		g.Expect(u.GetAnnotations()).To(HaveKeyWithValue("holdfast.dev/service", "web"))
	}

	// The same declaration again: everything Unchanged and not one write.
	counter.reset()
	opts.Previous = res.Inventory
	res2, err := a.Apply(ctx, set("one"), opts)
	g.Expect(err).NotTo(HaveOccurred())
	reads, writes, requests := counter.reset()
	for _, o := range res2.Objects {
		g.Expect(o.Action).To(Equal(apply.Unchanged), o.Ref.String())
	}
	g.Expect(writes).To(BeZero(), "mutating requests: %v", requests)
	g.Expect(res2.Changed).To(BeZero())
	g.Expect(res2.Inventory).To(ConsistOf(res.Inventory))
	t.Logf("unchanged re-apply of %d objects: %d read requests, %d write requests", len(res2.Objects), reads, writes)

	// An inventory recorded before its digests were written short ("sha256:" and the whole sum,
	// whose first 128 bits the short form is) is as good: not one write after an upgrade.
	long := make([]apply.InventoryEntry, len(res.Inventory))
	for i, e := range res.Inventory {
		g.Expect(e.OwnedDigest).NotTo(BeEmpty(), e.Ref.String())
		e.DesiredDigest = "sha256:" + e.DesiredDigest + strings.Repeat("f", 32)
		e.OwnedDigest = "sha256:" + e.OwnedDigest + strings.Repeat("f", 32)
		long[i] = e
	}
	opts.Previous = long
	resLong, err := a.Apply(ctx, set("one"), opts)
	g.Expect(err).NotTo(HaveOccurred())
	_, writes, requests = counter.reset()
	for _, o := range resLong.Objects {
		g.Expect(o.Action).To(Equal(apply.Unchanged), o.Ref.String())
	}
	g.Expect(writes).To(BeZero(), "mutating requests with the long digests recorded: %v", requests)
	g.Expect(resLong.Inventory).To(ConsistOf(res.Inventory), "written short again")

	// One object changes: only it is written.
	opts.Previous = res2.Inventory
	res3, err := a.Apply(ctx, set("changed"), opts)
	g.Expect(err).NotTo(HaveOccurred())
	_, writes, requests = counter.reset()
	for _, o := range res3.Objects {
		if o.Kind == "ConfigMap" && o.Name == "cfg" && o.Namespace == ns {
			g.Expect(o.Action).To(Equal(apply.Configured))
		} else {
			g.Expect(o.Action).To(Equal(apply.Unchanged), o.Ref.String())
		}
	}
	g.Expect(writes).To(Equal(1), "requests: %v", requests)
	g.Expect(res3.Changed).To(Equal(1))
	g.Expect(live(t, "v1", "ConfigMap", ns, "cfg").Object["data"]).To(HaveKeyWithValue("key", "changed"))

	// Force re-applies everything; nothing actually changes.
	opts.Previous, opts.Force = res3.Inventory, true
	res4, err := a.Apply(ctx, set("changed"), opts)
	g.Expect(err).NotTo(HaveOccurred())
	_, writes, _ = counter.reset()
	g.Expect(writes).To(Equal(9))
	for _, o := range res4.Objects {
		g.Expect(o.Action).To(Equal(apply.Unchanged), o.Ref.String())
	}
	g.Expect(res4.Inventory).To(ConsistOf(res3.Inventory))
}

func TestApplyFailuresArePerObject(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	a, _ := newApplier(t)
	big := strings.Repeat("x", 1100*1024)
	huge := strings.Repeat("x", 1600*1024)
	set := objects(t, `
apiVersion: v1
kind: ConfigMap
metadata: {name: good}
data: {key: value}
---
apiVersion: nope.test.holdfast.dev/v1
kind: Gadget
metadata: {name: g1}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: bad}
spec:
  replicas: -1
  selector: {matchLabels: {app: bad}}
  template:
    metadata: {labels: {app: bad}}
    spec: {containers: [{name: app, image: nginx}]}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: big}
data: {key: %s}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: huge}
data: {key: %s}
`, big, huge)
	nameless := &unstructured.Unstructured{}
	nameless.SetAPIVersion("v1")
	nameless.SetKind("ConfigMap")
	set = append(set, nameless)
	res, err := a.Apply(ctx, set, apply.Options{DefaultNamespace: ns, Labels: ownerLabels})
	g.Expect(err).NotTo(HaveOccurred())
	byName := map[string]apply.ObjectResult{}
	for _, o := range res.Objects {
		byName[o.Name] = o
	}
	g.Expect(byName["good"].Action).To(Equal(apply.Created))

	g.Expect(byName["g1"].Action).To(Equal(apply.Failed))
	g.Expect(errors.Is(byName["g1"].Err, apply.ErrUnknownKind)).To(BeTrue())
	g.Expect(byName["g1"].Message).To(And(ContainSubstring("Gadget"), ContainSubstring("install its CustomResourceDefinition")))

	g.Expect(byName["bad"].Action).To(Equal(apply.Failed))
	g.Expect(byName["bad"].Message).To(ContainSubstring("spec.replicas"))
	g.Expect(byName["bad"].Transient).To(BeFalse())
	g.Expect(apierrors.IsInvalid(byName["bad"].Err)).To(BeTrue())

	g.Expect(byName["big"].Action).To(Equal(apply.Failed))
	g.Expect(byName["big"].Transient).To(BeFalse())
	g.Expect(byName["big"].Message).To(ContainSubstring("1048576"))
	g.Expect(errors.Is(byName["huge"].Err, apply.ErrTooLarge)).To(BeTrue())

	g.Expect(byName[""].Action).To(Equal(apply.Failed))
	g.Expect(errors.Is(byName[""].Err, apply.ErrInvalidObject)).To(BeTrue())

	g.Expect(res.Inventory).To(HaveLen(1))
	g.Expect(res.Inventory[0].Name).To(Equal("good"))
	g.Expect(res.Err()).To(HaveOccurred())
	g.Expect(live(t, "apps/v1", "Deployment", ns, "bad")).To(BeNil())

	// No namespace anywhere.
	res, err = a.Apply(ctx, objects(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: lost}\n"), apply.Options{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Objects[0].Action).To(Equal(apply.Failed))
	g.Expect(errors.Is(res.Objects[0].Err, apply.ErrNoNamespace)).To(BeTrue())

	// While an object fails, nothing is pruned.
	prev := []apply.InventoryEntry{{Ref: apply.Ref{Version: "v1", Kind: "ConfigMap", Namespace: ns, Name: "good"}}}
	res, err = a.Apply(ctx, set[1:2], apply.Options{DefaultNamespace: ns, Labels: ownerLabels, Previous: prev, Prune: true})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(actions(res)).To(Equal(map[string]apply.Action{"Gadget/g1": apply.Failed, "ConfigMap/good": apply.Skipped}))
	g.Expect(res.Inventory).To(ConsistOf(prev))
	g.Expect(live(t, "v1", "ConfigMap", ns, "good")).NotTo(BeNil())
}

func TestIsTransient(t *testing.T) {
	g := NewWithT(t)
	gr := schema.GroupResource{Resource: "configmaps"}
	g.Expect(apply.IsTransient(apierrors.NewTooManyRequests("slow down", 1))).To(BeTrue())
	g.Expect(apply.IsTransient(apierrors.NewInternalError(errors.New(`failed calling webhook "x": connection refused`)))).To(BeTrue())
	g.Expect(apply.IsTransient(apierrors.NewServiceUnavailable("down"))).To(BeTrue())
	g.Expect(apply.IsTransient(apierrors.NewConflict(gr, "a", errors.New("changed")))).To(BeTrue())
	g.Expect(apply.IsTransient(context.DeadlineExceeded)).To(BeTrue())
	g.Expect(apply.IsTransient(apierrors.NewBadRequest("denied by webhook"))).To(BeFalse())
	g.Expect(apply.IsTransient(apierrors.NewForbidden(gr, "a", errors.New("no")))).To(BeFalse())
	g.Expect(apply.IsTransient(fmt.Errorf("x: %w", apply.ErrUnknownKind))).To(BeFalse())
	g.Expect(apply.IsTransient(fmt.Errorf("x: %w", apply.ErrNotEstablished))).To(BeTrue())
	g.Expect(apply.IsTransient(nil)).To(BeFalse())
	// client-go's words for an answer whose body it could not read (an HTTP/2 stream reset):
	// fleet.TestAnswerLostOverHTTP2 makes a real one.
	g.Expect(apply.IsTransient(fmt.Errorf("stream error when reading response body, may be caused by closed connection. Please retry. Original error: %w",
		errors.New("stream error: stream ID 1; INTERNAL_ERROR; received from peer")))).To(BeTrue())
}

// TestClaimSelectorSkipsReadsOfNewObjects: with a claim selector, new objects are applied
// without a GET each, and an object another owner manages is still seen and refused.
func TestClaimSelectorSkipsReadsOfNewObjects(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	ctx := context.Background()
	other := objects(t, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: taken\n  namespace: %s\ndata:\n  owner: b\n", ns)
	a, _ := newApplier(t)
	_, err := a.Apply(ctx, other, apply.Options{Labels: map[string]string{"holdfast.dev/managed-by": "holdfast", "holdfast.dev/owner": "mcs-b"}})
	g.Expect(err).NotTo(HaveOccurred())

	var manifests string
	for i := range 5 {
		manifests += fmt.Sprintf("---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: new-%d\n  namespace: %s\n", i, ns)
	}
	manifests += fmt.Sprintf("---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: taken\n  namespace: %s\n", ns)
	applier, counter := newApplier(t)
	counter.reset()
	res, err := applier.Apply(ctx, objects(t, "%s", manifests), apply.Options{
		Labels:        ownerLabels,
		ClaimSelector: map[string]string{"holdfast.dev/managed-by": "holdfast"},
		Claim: func(live *unstructured.Unstructured) (string, bool) {
			owner := live.GetLabels()["holdfast.dev/owner"]
			return owner, owner == "" || owner == "mcs-a"
		},
	})
	g.Expect(err).NotTo(HaveOccurred())
	reads, writes, _ := counter.reset()
	g.Expect(res.Objects).To(HaveLen(6))
	for _, o := range res.Objects {
		if o.Name == "taken" {
			g.Expect(o.Action).To(Equal(apply.Conflict))
			g.Expect(o.ConflictWith).To(Equal("mcs-b"))
		} else {
			g.Expect(o.Action).To(Equal(apply.Created), o.Name)
		}
	}
	g.Expect(writes).To(Equal(5))
	// One List for the namespace's ConfigMaps (plus discovery by the fresh client's REST
	// mapper); no GET per new object.
	g.Expect(reads).To(BeNumerically("<", 5), "reads")
}
