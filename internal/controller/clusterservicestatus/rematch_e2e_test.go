package clusterservicestatus_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/naming"
)

// setClusterLabel sets (value != "") or removes a label of a sandbox Cluster on the hub.
func setClusterLabel(t *testing.T, cluster, key, value string) {
	t.Helper()
	eventually(t, func(g Gomega) {
		c := &holdfastv1.Cluster{}
		g.Expect(hub.Get(context.Background(), clusterKey(cluster), c)).To(Succeed())
		before := c.DeepCopy()
		if value == "" {
			delete(c.Labels, key)
		} else {
			c.Labels[key] = value
		}
		g.Expect(hub.Patch(context.Background(), c, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))).To(Succeed())
	})
}

// setNamespaceFinalizers replaces the metadata finalizers of a Namespace on a target.
func setNamespaceFinalizers(t *testing.T, cluster, name string, finalizers ...string) {
	t.Helper()
	eventually(t, func(g Gomega) {
		ns := &corev1.Namespace{}
		g.Expect(targets[cluster].Get(context.Background(), client.ObjectKey{Name: name}, ns)).To(Succeed())
		before := ns.DeepCopy()
		ns.Finalizers = finalizers
		g.Expect(targets[cluster].Patch(context.Background(), ns, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}),
			client.FieldOwner("test-finalizer"))).To(Succeed())
	})
}

// TestQuickRematchIsNotDrift: a cluster unmatched and matched again at once. The withdrawal
// deletes the service's Namespace, which is still terminating when the new status object
// deploys (held here by a finalizer, as its contents would hold it); once it is gone the new
// status object creates it, and records no drift: nobody but Holdfast deleted it (test/soak saw
// "Deleted Namespace" recorded, and the namespace "corrected").
func TestQuickRematchIsNotDrift(t *testing.T) {
	name, ns := objName(t, ""), objName(t, "ns")
	label := "rematch-" + name
	const hold = "holdfast.dev/test-hold"
	createTemplate(t, name, holdfastv1.ServiceTemplateSpec{Templating: holdfastv1.TemplatingGoTemplate, Inline: configMaps(ns, "a")})
	sel := selectEnv("")
	sel.MatchLabels[label] = "yes"
	setClusterLabel(t, "cluster-1", label, "yes")
	t.Cleanup(func() { setClusterLabel(t, "cluster-1", label, "") })
	createServiceSet(t, name, holdfastv1.MultiClusterServiceSpec{
		ClusterSelector: sel, SyncMode: holdfastv1.SyncModeContinuousWithDriftDetection,
		Services: []holdfastv1.Service{service("web", name, ns)},
	})
	first := expectReady(t, name, "cluster-1")
	setNamespaceFinalizers(t, "cluster-1", ns, hold)
	t.Cleanup(func() {
		ns := &corev1.Namespace{}
		if targets["cluster-1"].Get(context.Background(), client.ObjectKey{Name: ns.Name}, ns) == nil {
			setNamespaceFinalizers(t, "cluster-1", ns.Name)
		}
	})

	t.Log("Unmatched: the withdrawal deletes the namespace, which stays terminating")
	setClusterLabel(t, "cluster-1", label, "")
	eventually(t, func(g Gomega) {
		css := &holdfastv1.ClusterServiceStatus{}
		err := hub.Get(context.Background(), client.ObjectKeyFromObject(first), css)
		g.Expect(apiNotFound(err)).To(BeTrue(), "status object still there: %v", err)
		n := &corev1.Namespace{}
		g.Expect(targets["cluster-1"].Get(context.Background(), client.ObjectKey{Name: ns}, n)).To(Succeed())
		g.Expect(n.DeletionTimestamp).NotTo(BeNil())
	})

	t.Log("Matched again while the namespace is terminating")
	setClusterLabel(t, "cluster-1", label, "yes")
	eventually(t, func(g Gomega) {
		css := statusOf(g, name, "cluster-1")
		g.Expect(css.UID).NotTo(Equal(first.UID))
		rs := resourceNamed(css.Status.Resources, "Namespace", ns)
		g.Expect(rs.State).To(Equal(holdfastv1.ResourceFailed))
		g.Expect(rs.Message).To(ContainSubstring("being deleted"))
		g.Expect(rs.Desired).To(BeEmpty(), "a terminating namespace taken for applied")
	})
	setNamespaceFinalizers(t, "cluster-1", ns)
	eventually(t, func(g Gomega) {
		getConfigMap(g, "cluster-1", ns, "a")
		n := &corev1.Namespace{}
		g.Expect(targets["cluster-1"].Get(context.Background(), client.ObjectKey{Name: ns}, n)).To(Succeed())
		g.Expect(n.DeletionTimestamp).To(BeNil())
	})
	expectReady(t, name, "cluster-1")
	consistently(t, 3*time.Second, func(g Gomega) {
		css := statusOf(g, name, "cluster-1")
		g.Expect(css.Status.Drifts).To(BeEmpty(), "Holdfast's own withdrawal recorded as drift")
		g.Expect(css.Status.DriftCount).To(BeZero())
	})
}

// TestDriftPutBackByANewRevisionIsCorrected: in Report mode a deleted object is reported and
// left deleted; a new template revision deploys it again, and its drift record is then marked
// corrected (test/soak found such records left uncorrected for good).
func TestDriftPutBackByANewRevisionIsCorrected(t *testing.T) {
	name, ns := objName(t, ""), objName(t, "ns")
	createTemplate(t, name, holdfastv1.ServiceTemplateSpec{Templating: holdfastv1.TemplatingGoTemplate, Inline: configMaps(ns, "a", "b")})
	createServiceSet(t, name, holdfastv1.MultiClusterServiceSpec{
		ClusterSelector: selectEnv("dev"), SyncMode: holdfastv1.SyncModeContinuousWithDriftDetection,
		Drift:    &holdfastv1.DriftPolicy{Action: holdfastv1.DriftActionReport},
		Services: []holdfastv1.Service{service("web", name, ns)},
	})
	expectReady(t, name, "cluster-1")

	deleteOutOfBand(t, "cluster-1", ns, "a")
	eventually(t, func(g Gomega) {
		css := statusOf(g, name, "cluster-1")
		g.Expect(resourceNamed(css.Status.Resources, "ConfigMap", "a").State).To(Equal(holdfastv1.ResourceMissing))
		g.Expect(css.Status.Drifts).To(ContainElement(And(HaveField("Name", "a"), HaveField("Type", holdfastv1.DriftDeleted),
			HaveField("CorrectedTime", BeNil()))))
	})

	t.Log("A new revision deploys the object again")
	updateTemplate(t, name, func(tpl *holdfastv1.ServiceTemplate) {
		tpl.Spec.Inline = configMaps(ns, "b", "a") + "  revision: '2'\n" // a's data
	})
	eventually(t, func(g Gomega) {
		g.Expect(getConfigMap(g, "cluster-1", ns, "a").Data).To(HaveKeyWithValue("revision", "2"))
		css := statusOf(g, name, "cluster-1")
		g.Expect(resourceNamed(css.Status.Resources, "ConfigMap", "a").State).To(Equal(holdfastv1.ResourceInSync))
		g.Expect(css.Status.Drifts).NotTo(BeEmpty())
		for _, d := range css.Status.Drifts {
			g.Expect(d.CorrectedTime).NotTo(BeNil(), "record of %s %s put back by the new revision", d.Kind, d.Name)
		}
		g.Expect(condition(css.Status.Conditions, holdfastv1.DriftedCondition).Status).To(Equal(metav1.ConditionFalse))
	})
}

// TestUnmatchedWhileItsFirstDeployIsRecorded: the cluster is unmatched while the status object's
// first deploy is being recorded, so that its status patch meets the version the deletion
// wrote. What the deploy applied is recorded all the same, and withdrawn with the status object
// (test/soak found the objects left on the cluster: the deletion read an empty inventory).
func TestUnmatchedWhileItsFirstDeployIsRecorded(t *testing.T) {
	ctx := context.Background()
	name, ns := objName(t, ""), objName(t, "ns")
	label := "unmatched-" + name
	createTemplate(t, name, holdfastv1.ServiceTemplateSpec{Templating: holdfastv1.TemplatingGoTemplate, Inline: configMaps(ns, "a")})
	sel := selectEnv("")
	sel.MatchLabels[label] = "yes"
	setClusterLabel(t, "cluster-1", label, "yes")
	t.Cleanup(func() { setClusterLabel(t, "cluster-1", label, "") })

	statusName := naming.StatusName(name, "cluster-1")
	var once sync.Once
	unmatched := make(chan error, 1)
	onHub(t, func(req *http.Request) {
		if req.Method != http.MethodPatch || !strings.HasSuffix(req.URL.Path, "/clusterservicestatuses/"+statusName+"/status") || req.Body == nil {
			return
		}
		body, err := io.ReadAll(req.Body)
		req.Body = io.NopCloser(bytes.NewReader(body))
		if err != nil || !bytes.Contains(body, []byte(`"resources":[`)) {
			return
		}
		once.Do(func() { unmatched <- unmatchAndAwaitDeletion(ctx, statusName, label) })
	})
	createServiceSet(t, name, holdfastv1.MultiClusterServiceSpec{
		ClusterSelector: sel, SyncMode: holdfastv1.SyncModeContinuousWithDriftDetection,
		Services: []holdfastv1.Service{service("web", name, ns)},
	})
	select {
	case err := <-unmatched:
		if err != nil {
			t.Fatalf("unmatching the cluster while the deploy was recorded: %v", err)
		}
	case <-time.After(timeout):
		t.Fatal("the deploy's status patch was never sent")
	}
	eventually(t, func(g Gomega) {
		css := &holdfastv1.ClusterServiceStatus{}
		err := hub.Get(ctx, client.ObjectKey{Namespace: clusterNamespace, Name: statusName}, css)
		g.Expect(apiNotFound(err)).To(BeTrue(), "status object still there: %v", err)
		n := &corev1.Namespace{}
		err = targets["cluster-1"].Get(ctx, client.ObjectKey{Name: ns}, n)
		g.Expect(apiNotFound(err) || (err == nil && n.DeletionTimestamp != nil)).To(BeTrue(), "namespace %s left on the cluster", ns)
		expectNoConfigMap(g, "cluster-1", ns, "a")
	})
}

// unmatchAndAwaitDeletion removes label from cluster-1, and waits until the MultiClusterService
// controller has deleted the status object named statusName (its finalizer holds it).
func unmatchAndAwaitDeletion(ctx context.Context, statusName, label string) error {
	c := &holdfastv1.Cluster{}
	if err := hub.Get(ctx, clusterKey("cluster-1"), c); err != nil {
		return err
	}
	before := c.DeepCopy()
	delete(c.Labels, label)
	if err := hub.Patch(ctx, c, client.MergeFrom(before)); err != nil {
		return err
	}
	return wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		css := &holdfastv1.ClusterServiceStatus{}
		err := hub.Get(ctx, client.ObjectKey{Namespace: clusterNamespace, Name: statusName}, css)
		return err == nil && css.DeletionTimestamp != nil, client.IgnoreNotFound(err)
	})
}
