package clusterservicestatus_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

// immutableObjects are objects with immutable fields, as declared ("declared") or as someone
// re-creates them under the same name with other immutable content ("replaced"): a Job's pod
// template, a Deployment's selector, a PersistentVolumeClaim's storage class.
func immutableObjects(ns, variant string) map[string]string {
	return map[string]string{
		"Job": fmt.Sprintf(`apiVersion: batch/v1
kind: Job
metadata: {name: once, namespace: %[1]s}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: main, image: busybox, command: [echo, %[2]s]}]
`, ns, variant),
		"Deployment": fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: %[1]s}
spec:
  replicas: 1
  selector: {matchLabels: {app: web-%[2]s}}
  template:
    metadata: {labels: {app: web-%[2]s}}
    spec:
      containers: [{name: web, image: nginx}]
`, ns, variant),
		"PersistentVolumeClaim": fmt.Sprintf(`apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data, namespace: %[1]s}
spec:
  storageClassName: class-%[2]s
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
`, ns, variant),
	}
}

// settledAsApplied are health checks that judge a Job and a PersistentVolumeClaim healthy as
// applied, for tests about something else than their health.
var settledAsApplied = []holdfastv1.HealthCheck{{Group: "batch", Kind: "Job", Expr: "true"}, {Kind: "PersistentVolumeClaim", Expr: "true"}}

var immutableFieldOf = map[string]string{"Job": "spec.template", "Deployment": "spec.selector", "PersistentVolumeClaim": "spec"}

func liveObject(g Gomega, cluster, apiVersion, kind, ns, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	g.Expect(targets[cluster].Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, u)).To(Succeed())
	return u
}

// TestReplacedObjectsAreDrift: someone deletes managed objects and creates others of the same
// names with different immutable content (kubectl replace --force). A correction cannot apply
// over them: by default each stays Uncorrectable naming the immutable field, the drift record
// stays open and the replacement is left alone; with spec.drift.immutable.action Recreate the
// replacements are deleted and the declared objects created, and only then are the records
// marked corrected.
func TestReplacedObjectsAreDrift(t *testing.T) {
	name, ns := objName(t, ""), objName(t, "ns")
	ctx := context.Background()
	declared := immutableObjects(ns, "declared")
	inline := fmt.Sprintf("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s\n", ns)
	for _, kind := range []string{"Job", "Deployment", "PersistentVolumeClaim"} {
		inline += "---\n" + declared[kind]
	}
	createTemplate(t, name, holdfastv1.ServiceTemplateSpec{Inline: inline})
	createServiceSet(t, name, holdfastv1.MultiClusterServiceSpec{
		ClusterSelector: selectEnv("dev"), SyncMode: holdfastv1.SyncModeContinuousWithDriftDetection,
		Drift:    &holdfastv1.DriftPolicy{Action: holdfastv1.DriftActionReport},
		Services: []holdfastv1.Service{service("web", name, ns)},
		// Ready means healthy: the simulated node never completes the Job's pod, and no
		// provisioner binds the claim. This test is about drift, not their health.
		HealthChecks: settledAsApplied,
	})
	expectReady(t, name, "cluster-1")
	c1 := targets["cluster-1"]

	t.Log("Replaced by hand: deleted, then created again with other immutable content")
	replacements := map[string]types.UID{}
	for kind, text := range immutableObjects(ns, "replaced") {
		obj := &unstructured.Unstructured{}
		NewWithT(t).Expect(yaml.Unmarshal([]byte(text), &obj.Object)).To(Succeed())
		old := obj.DeepCopy()
		NewWithT(t).Expect(c1.Delete(ctx, old, client.PropagationPolicy(metav1.DeletePropagationBackground))).To(Succeed())
		eventually(t, func(g Gomega) {
			g.Expect(apierrors.IsNotFound(c1.Get(ctx, client.ObjectKeyFromObject(old), old.DeepCopy()))).To(BeTrue(), "%s still there", kind)
		})
		eventually(t, func(g Gomega) {
			g.Expect(c1.Create(ctx, obj.DeepCopy(), client.FieldOwner("kubectl-replace"))).To(Succeed())
		})
		replacements[kind] = liveObject(NewWithT(t), "cluster-1", obj.GetAPIVersion(), kind, ns, obj.GetName()).GetUID()
	}
	// The deletions are reported (Report mode) before the correction is asked for, so that the
	// request is what handles them, however late the watches deliver the events.
	eventually(t, func(g Gomega) {
		drifts := statusOf(g, name, "cluster-1").Status.Drifts
		for _, kind := range []string{"Job", "Deployment", "PersistentVolumeClaim"} {
			g.Expect(drifts).To(ContainElement(And(HaveField("Kind", kind), HaveField("Type", holdfastv1.DriftDeleted))), "deletion of the %s reported", kind)
		}
	})
	requestCorrection(t, name, "replace-1")

	names := map[string]string{"Job": "once", "Deployment": "web", "PersistentVolumeClaim": "data"}
	apiVersions := map[string]string{"Job": "batch/v1", "Deployment": "apps/v1", "PersistentVolumeClaim": "v1"}
	eventually(t, func(g Gomega) {
		css := statusOf(g, name, "cluster-1")
		g.Expect(css.Status.LastHandledReconcileAt).To(Equal("replace-1"))
		for kind, obj := range names {
			rs := resourceNamed(css.Status.Resources, kind, obj)
			g.Expect(rs.State).To(Equal(holdfastv1.ResourceUncorrectable), "state of %s", kind)
			g.Expect(rs.Message).To(And(ContainSubstring("immutable"), ContainSubstring(immutableFieldOf[kind])), "message of %s", kind)
			g.Expect(rs.Message).NotTo(ContainSubstring("replaced"), "the message quotes the live value of %s", kind)
			g.Expect(css.Status.Drifts).To(ContainElement(And(HaveField("Kind", kind), HaveField("Type", holdfastv1.DriftDeleted))))
			for _, d := range css.Status.Drifts {
				if d.Kind == kind {
					g.Expect(d.CorrectedTime).To(BeNil(), "a record of %s says corrected while the replacement stays", kind)
				}
			}
		}
		g.Expect(condition(css.Status.Conditions, holdfastv1.DriftedCondition).Reason).To(Equal(holdfastv1.CorrectionFailedReason))
	})
	// Longer than the first retry of a refused correction (5 s): in Report mode nothing retries it
	// on its own, and the refusal is not turned back into a fresh "reported" drift.
	consistently(t, 7*time.Second, func(g Gomega) {
		css := statusOf(g, name, "cluster-1")
		for kind, obj := range names {
			g.Expect(liveObject(g, "cluster-1", apiVersions[kind], kind, ns, obj).GetUID()).To(Equal(replacements[kind]), "%s was touched by default", kind)
			g.Expect(resourceNamed(css.Status.Resources, kind, obj).State).To(Equal(holdfastv1.ResourceUncorrectable), "state of %s stays", kind)
		}
	})

	t.Log("Policy Recreate: the replacements are deleted and the declared objects created")
	updateServiceSet(t, name, func(m *holdfastv1.MultiClusterService) {
		m.Spec.Drift.Immutable = &holdfastv1.ImmutablePolicy{Action: holdfastv1.ImmutableRecreate}
	})
	requestCorrection(t, name, "replace-2")
	eventually(t, func(g Gomega) {
		job := liveObject(g, "cluster-1", "batch/v1", "Job", ns, "once")
		g.Expect(job.GetUID()).NotTo(Equal(replacements["Job"]))
		containers, _, _ := unstructured.NestedSlice(job.Object, "spec", "template", "spec", "containers")
		g.Expect(containers).To(HaveLen(1))
		g.Expect(containers[0].(map[string]any)["command"]).To(Equal([]any{"echo", "declared"}))
		dep := liveObject(g, "cluster-1", "apps/v1", "Deployment", ns, "web")
		g.Expect(dep.GetUID()).NotTo(Equal(replacements["Deployment"]))
		sel, _, _ := unstructured.NestedString(dep.Object, "spec", "selector", "matchLabels", "app")
		g.Expect(sel).To(Equal("web-declared"))
		pvc := liveObject(g, "cluster-1", "v1", "PersistentVolumeClaim", ns, "data")
		g.Expect(pvc.GetUID()).NotTo(Equal(replacements["PersistentVolumeClaim"]))
		class, _, _ := unstructured.NestedString(pvc.Object, "spec", "storageClassName")
		g.Expect(class).To(Equal("class-declared"))

		css := statusOf(g, name, "cluster-1")
		for kind, obj := range names {
			g.Expect(resourceNamed(css.Status.Resources, kind, obj).State).To(Equal(holdfastv1.ResourceInSync), "state of %s", kind)
			g.Expect(css.Status.Drifts).To(ContainElement(And(HaveField("Kind", kind), HaveField("CorrectedTime", Not(BeNil())))))
		}
		g.Expect(condition(css.Status.Conditions, holdfastv1.DriftedCondition).Status).To(Equal(metav1.ConditionFalse))
	})
}
