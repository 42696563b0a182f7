package drift

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	toolscache "k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
)

// NamespacedSource is what EnsureIn needs of a connection whose identity may not watch a kind in
// every namespace: a dynamic client, the connection's cache (which identifies the connection:
// Forget lets go of what was started for it) and when the connection is closed.
type NamespacedSource struct {
	Cache    cache.Cache
	Client   dynamic.Interface
	Selector labels.Selector
	Done     <-chan struct{}
}

type namespacedKey struct {
	cache     cache.Cache
	gvk       schema.GroupVersionKind
	namespace string
}

type namespacedInformer struct {
	informer  toolscache.SharedIndexInformer
	compactor *Compactor
	stop      context.CancelFunc
}

// EnsureIn makes sure changes to objects of gvk (resource gvr) in namespace of the cluster are
// reported, for an identity that may watch them only there: one informer per namespace, with
// the same compacting transform and handler as Ensure's, running until the connection is closed
// or Forget. It does not wait for the informer to sync.
func (w *Watches) EnsureIn(ctx context.Context, cluster types.NamespacedName, src NamespacedSource, gvk schema.GroupVersionKind, gvr schema.GroupVersionResource, namespace string) error {
	k := namespacedKey{cache: src.Cache, gvk: gvk, namespace: namespace}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.namespaced == nil {
		w.namespaced = map[namespacedKey]namespacedInformer{}
	}
	if _, ok := w.namespaced[k]; ok {
		return nil
	}
	selector := ""
	if src.Selector != nil {
		selector = src.Selector.String()
	}
	inf := dynamicinformer.NewFilteredDynamicInformer(src.Client, gvr, namespace, 0, toolscache.Indexers{},
		func(o *metav1.ListOptions) { o.LabelSelector = selector }).Informer()
	compactor := NewCompactor()
	if w.Applied != nil {
		compactor = w.Applied.Compactor(cluster)
	}
	if err := inf.SetTransform(compactor.Transform); err != nil {
		compactor.Release()
		return fmt.Errorf("watching %s in namespace %s on cluster %s: %w", gvk.Kind, namespace, cluster, err)
	}
	reg, err := inf.AddEventHandler(w.handler(cluster))
	if err != nil {
		compactor.Release()
		return fmt.Errorf("watching %s in namespace %s on cluster %s: %w", gvk.Kind, namespace, cluster, err)
	}
	go w.whenSynced(cluster, reg, inf.IsStopped)
	runCtx, stop := context.WithCancel(context.Background())
	go func() {
		select {
		case <-src.Done:
			stop()
		case <-runCtx.Done():
		}
	}()
	go inf.RunWithContext(runCtx)
	w.namespaced[k] = namespacedInformer{informer: inf, compactor: compactor, stop: stop}
	ctrl.LoggerFrom(ctx).V(1).Info("Watching managed objects in one namespace", "cluster", cluster.String(), "kind", gvk.String(), "namespace", namespace)
	return nil
}

// forgetNamespaced stops and forgets the namespaced informers of cache c; w.mu is held.
func (w *Watches) forgetNamespaced(c cache.Cache) {
	for k, n := range w.namespaced {
		if k.cache == c {
			n.stop()
			n.compactor.Release()
			delete(w.namespaced, k)
		}
	}
}
