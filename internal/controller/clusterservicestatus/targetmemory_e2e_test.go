package clusterservicestatus_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

// Size of the flood: labelled ConfigMaps, each with a holdfast.dev/ annotation of floodPadding
// bytes (floodObjects × floodPadding = 16 MiB that a cache keeping them would hold).
const (
	floodObjects = 2000
	floodPadding = 8 << 10
)

// cachedConfigMaps returns what the cache of cluster's connection holds for ConfigMaps in
// namespace: how many objects, and the bytes of the labels and annotations they keep.
func cachedConfigMaps(g Gomega, cluster, namespace string) (objects, keptBytes int) {
	conn := targetFleet.Get(types.NamespacedName{Namespace: clusterNamespace, Name: cluster})
	g.Expect(conn).NotTo(BeNil())
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMap"))
	inf, err := conn.Cluster().GetCache().GetInformer(context.Background(), u, cache.BlockUntilSynced(false))
	g.Expect(err).NotTo(HaveOccurred())
	store := inf.(toolscache.SharedIndexInformer).GetStore()
	for _, item := range store.List() {
		o, err := meta.Accessor(item)
		g.Expect(err).NotTo(HaveOccurred())
		if o.GetNamespace() != namespace {
			continue
		}
		objects++
		for _, m := range []map[string]string{o.GetLabels(), o.GetAnnotations()} {
			for k, v := range m {
				keptBytes += len(k) + len(v)
			}
		}
	}
	return objects, keptBytes
}

// targetCacheMetric reads a series of the target cache metrics for cluster (kept: the "kept"
// label, or "" for none), and whether it exists.
func targetCacheMetric(g Gomega, name, cluster, kept string) (float64, bool) {
	m := metricSeries(g, name, map[string]string{"cluster": cluster, "kept": kept})
	return m.GetGauge().GetValue(), m != nil
}

// TestAFloodOfLabelledObjectsIsNotKept: anyone who may create objects on a target can label them
// as Holdfast's and give them large holdfast.dev/ annotations, even one naming a real service set
// as owner. The drift watches' cache keeps a stub of each (identity only): nothing of their
// labels and annotations, whatever their number, while it holds what Holdfast applied in full;
// holdfast_target_cache_* say so per cluster. Drift of the objects Holdfast applied is still
// detected and corrected during the flood.
func TestAFloodOfLabelledObjectsIsNotKept(t *testing.T) {
	name, ns, floodNS := objName(t, ""), objName(t, "ns"), objName(t, "flood")
	ctx := context.Background()
	c1 := targets["cluster-1"]
	// The flood comes from a client of its own, not throttled as the suite's are.
	var cfg *rest.Config
	for _, tp := range fl.Targets {
		if tp.Name() == "cluster-1" {
			cfg = tp.RESTConfig()
		}
	}
	cfg.QPS, cfg.Burst = 500, 1000
	flooder, err := client.New(cfg, client.Options{Scheme: hub.Scheme()})
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	createTemplate(t, name, holdfastv1.ServiceTemplateSpec{Templating: holdfastv1.TemplatingGoTemplate, Inline: configMaps(ns, "a", "b")})
	createServiceSet(t, name, holdfastv1.MultiClusterServiceSpec{
		ClusterSelector: selectEnv("dev"), SyncMode: holdfastv1.SyncModeContinuousWithDriftDetection,
		Services: []holdfastv1.Service{service("web", name, ns)},
	})
	expectReady(t, name, "cluster-1")
	cluster := clusterNamespace + "/cluster-1"

	NewWithT(t).Expect(c1.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: floodNS}})).To(Succeed())
	t.Cleanup(func() {
		_ = c1.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: floodNS}})
	})
	padding := strings.Repeat("p", floodPadding)
	var wg sync.WaitGroup
	errs := make(chan error, floodObjects)
	next := make(chan int)
	for range 8 {
		wg.Go(func() {
			for i := range next {
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("flood-%04d", i), Namespace: floodNS,
					Labels: map[string]string{holdfastv1.ManagedByLabel: holdfastv1.ManagedByValue, holdfastv1.ServiceLabel: "web"},
					// Each value its own: equal ones would share one interned copy.
					Annotations: map[string]string{holdfastv1.OwnerAnnotation: name, "holdfast.dev/padding": fmt.Sprint(i) + padding[len(fmt.Sprint(i)):]}},
					Data: map[string]string{"cluster": "cluster-1"}}
				if err := flooder.Create(ctx, cm); err != nil {
					errs <- err
				}
			}
		})
	}
	for i := range floodObjects {
		if i == floodObjects/2 {
			// Halfway through the flood, an object Holdfast applied is edited.
			editConfigMap(t, "cluster-1", ns, "a", "kubectl-edit", "cluster", "hand-edited")
		}
		next <- i
	}
	close(next)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("creating the flood: %v", err)
	}

	eventually(t, func(g Gomega) {
		g.Expect(getConfigMap(g, "cluster-1", ns, "a").Data["cluster"]).To(Equal("cluster-1"), "the edit during the flood is corrected")
		g.Expect(statusOf(g, name, "cluster-1").Status.Drifts).To(ContainElement(And(HaveField("Name", "a"),
			HaveField("Manager", "kubectl-edit"), HaveField("CorrectedTime", Not(BeNil())))))
	})
	eventually(t, func(g Gomega) {
		objects, kept := cachedConfigMaps(g, "cluster-1", floodNS)
		g.Expect(objects).To(Equal(floodObjects), "the flood reached the cache")
		g.Expect(kept).To(BeZero(), "bytes of labels and annotations the cache keeps of %d labelled objects Holdfast did not apply", objects)
		_, ours := cachedConfigMaps(g, "cluster-1", ns)
		g.Expect(ours).To(BeNumerically(">", 0), "what the cache keeps of the objects Holdfast applied")

		foreign, ok := targetCacheMetric(g, "holdfast_target_cache_objects", cluster, "foreign")
		g.Expect(ok).To(BeTrue(), "holdfast_target_cache_objects{kept=foreign} for %s", cluster)
		g.Expect(foreign).To(BeNumerically(">=", floodObjects))
		snapshots, _ := targetCacheMetric(g, "holdfast_target_cache_objects", cluster, "snapshot")
		g.Expect(snapshots).To(BeNumerically(">=", 2))
		bytes, _ := targetCacheMetric(g, "holdfast_target_cache_snapshot_bytes", cluster, "")
		g.Expect(bytes).To(BeNumerically("<", snapshots*4096), "snapshot bytes of %v snapshots", snapshots)
	})

	// Still corrected after the flood.
	editConfigMap(t, "cluster-1", ns, "b", "kubectl-edit", "cluster", "hand-edited")
	eventually(t, func(g Gomega) {
		g.Expect(getConfigMap(g, "cluster-1", ns, "b").Data["cluster"]).To(Equal("cluster-1"))
	})
}
