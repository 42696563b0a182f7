package clusterservicestatus_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

// keyedListsYAML declares a Service with one port and three Deployments whose container, env
// var and volume are the list items whose keys the test changes.
func keyedListsYAML(ns string) string {
	deployment := func(name, extra string) string {
		return fmt.Sprintf(`---
apiVersion: apps/v1
kind: Deployment
metadata: {name: %[1]s, namespace: %[2]s}
spec:
  replicas: 1
  selector: {matchLabels: {app: %[1]s}}
  template:
    metadata: {labels: {app: %[1]s}}
    spec:
      containers:
      - name: app
        image: nginx:1
        env: [{name: FOO, value: declared-foo}]
%[3]s`, name, ns, extra)
	}
	return fmt.Sprintf(`apiVersion: v1
kind: Namespace
metadata: {name: %[1]s}
---
apiVersion: v1
kind: Service
metadata: {name: svc, namespace: %[1]s}
spec:
  selector: {app: web}
  ports: [{name: http, port: 80, targetPort: 8080}]
`, ns) + deployment("web-rename", "") + deployment("web-env", "") + deployment("web-vol", `        volumeMounts: [{name: cfg, mountPath: /cfg}]
      volumes: [{name: cfg, configMap: {name: web-cfg}}]
`)
}

func editDeployment(t *testing.T, ns, name, manager string, mutate func(*appsv1.Deployment)) {
	t.Helper()
	eventually(t, func(g Gomega) {
		d := &appsv1.Deployment{}
		g.Expect(targets["cluster-1"].Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, d)).To(Succeed())
		mutate(d)
		g.Expect(targets["cluster-1"].Update(context.Background(), d, client.FieldOwner(manager))).To(Succeed())
	})
}

func containerNames(cs []corev1.Container) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Name)
	}
	return out
}

// TestChangedListKeysAreRestored: someone changes the key of an item of an associative list
// Holdfast declares — a Service port 80 -> 8081, a container, an env var and a volume renamed.
// The API server records a declared item removed and a foreign one added. The correction
// restores the declared list: the foreign item that replaced a declared one goes, while an item
// another manager merely added beside the declared ones (an injected sidecar) stays.
func TestChangedListKeysAreRestored(t *testing.T) {
	name, ns := objName(t, ""), objName(t, "ns")
	ctx := context.Background()
	createTemplate(t, name, holdfastv1.ServiceTemplateSpec{Inline: keyedListsYAML(ns)})
	createServiceSet(t, name, holdfastv1.MultiClusterServiceSpec{
		ClusterSelector: selectEnv("dev"), SyncMode: holdfastv1.SyncModeContinuousWithDriftDetection,
		Services: []holdfastv1.Service{service("web", name, ns)},
	})
	expectReady(t, name, "cluster-1")
	c1 := targets["cluster-1"]

	// Added beside, not drift: stays.
	editDeployment(t, ns, "web-rename", "sidecar-injector", func(d *appsv1.Deployment) {
		d.Spec.Template.Spec.Containers = append(d.Spec.Template.Spec.Containers, corev1.Container{Name: "sidecar", Image: "busybox"})
	})
	eventually(t, func(g Gomega) {
		svc := &corev1.Service{}
		g.Expect(c1.Get(ctx, client.ObjectKey{Namespace: ns, Name: "svc"}, svc)).To(Succeed())
		svc.Spec.Ports[0].Port = 8081
		g.Expect(c1.Update(ctx, svc, client.FieldOwner("kubectl-edit"))).To(Succeed())
	})
	editDeployment(t, ns, "web-rename", "kubectl-edit", func(d *appsv1.Deployment) {
		for i := range d.Spec.Template.Spec.Containers {
			if d.Spec.Template.Spec.Containers[i].Name == "app" {
				d.Spec.Template.Spec.Containers[i].Name = "app2"
			}
		}
	})
	editDeployment(t, ns, "web-env", "kubectl-edit", func(d *appsv1.Deployment) {
		d.Spec.Template.Spec.Containers[0].Env[0].Name = "BAR"
	})
	editDeployment(t, ns, "web-vol", "kubectl-edit", func(d *appsv1.Deployment) {
		d.Spec.Template.Spec.Volumes[0].Name = "cfg2"
		d.Spec.Template.Spec.Containers[0].VolumeMounts[0].Name = "cfg2"
	})

	eventually(t, func(g Gomega) {
		svc := &corev1.Service{}
		g.Expect(c1.Get(ctx, client.ObjectKey{Namespace: ns, Name: "svc"}, svc)).To(Succeed())
		svcState := resourceNamed(statusOf(g, name, "cluster-1").Status.Resources, "Service", "svc")
		g.Expect(svc.Spec.Ports).To(HaveLen(1), "ports %+v; status %+v", svc.Spec.Ports, svcState)
		g.Expect(svc.Spec.Ports[0].Port).To(Equal(int32(80)), "ports %+v; status %+v; managedFields %s", svc.Spec.Ports, svcState, managedFieldsOf(svc))
		g.Expect(svc.Spec.Ports[0].Name).To(Equal("http"))
		g.Expect(svc.Spec.Ports[0].TargetPort).To(Equal(intstr.FromInt32(8080)))

		get := func(name string) *appsv1.Deployment {
			d := &appsv1.Deployment{}
			g.Expect(c1.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, d)).To(Succeed())
			return d
		}
		rename := get("web-rename").Spec.Template.Spec
		g.Expect(containerNames(rename.Containers)).To(ConsistOf("app", "sidecar"))
		env := get("web-env").Spec.Template.Spec.Containers[0].Env
		g.Expect(env).To(HaveLen(1))
		g.Expect(env[0].Name).To(Equal("FOO"))
		g.Expect(env[0].Value).To(Equal("declared-foo"))
		vol := get("web-vol").Spec.Template.Spec
		g.Expect(vol.Volumes).To(HaveLen(1))
		g.Expect(vol.Volumes[0].Name).To(Equal("cfg"))
		g.Expect(vol.Containers[0].VolumeMounts).To(HaveLen(1))
		g.Expect(vol.Containers[0].VolumeMounts[0].Name).To(Equal("cfg"))

		css := statusOf(g, name, "cluster-1")
		for _, obj := range []struct{ kind, name string }{{"Service", "svc"}, {"Deployment", "web-rename"}, {"Deployment", "web-env"}, {"Deployment", "web-vol"}} {
			g.Expect(resourceNamed(css.Status.Resources, obj.kind, obj.name).State).To(Equal(holdfastv1.ResourceInSync), "%s %s", obj.kind, obj.name)
			g.Expect(css.Status.Drifts).To(ContainElement(And(HaveField("Kind", obj.kind), HaveField("Name", obj.name),
				HaveField("Manager", "kubectl-edit"), HaveField("CorrectedTime", Not(BeNil())))), "%s %s", obj.kind, obj.name)
		}
	})
}

func managedFieldsOf(o client.Object) string {
	var out []string
	for _, e := range o.GetManagedFields() {
		out = append(out, e.Manager+" "+string(e.Operation)+" "+e.FieldsV1.GetRawString())
	}
	return strings.Join(out, "\n")
}
