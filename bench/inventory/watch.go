package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	toolscache "k8s.io/client-go/tools/cache"

	"holdfast.dev/holdfast/bench/internal/measure"
)

const (
	// inventoryLabel marks every ConfigMap of this benchmark with its corrector: byHoldfast or
	// byIdeal. This program's watch selects the key, the ideal corrector's the value byIdeal.
	inventoryLabel = "bench.holdfast.dev/inventory"
	byHoldfast     = "holdfast"
	byIdeal        = "ideal"
	// idealManager is the ideal corrector's field manager.
	idealManager = "ideal"
	// valueKey is the data key the edits change.
	valueKey = "value"
	// idealWorkers apply the ideal's ConfigMaps at deployment.
	idealWorkers = 8
)

// declaredData is a ConfigMap's data as both correctors declare it.
func declaredData(name string) map[string]string {
	return map[string]string{valueKey: "declared-" + name, "LOG_LEVEL": "info"}
}

// manifests renders Holdfast's template: the Namespace ns and n ConfigMaps with small data.
// Namespaced objects carry no namespace: the service's applies.
func manifests(n int, ns string) string {
	d := measure.NewDocs(ns)
	for i := range n {
		name := configMapName(i)
		data := declaredData(name)
		var lines strings.Builder
		for _, k := range slices.Sorted(maps.Keys(data)) {
			fmt.Fprintf(&lines, "  %s: %s\n", k, data[k])
		}
		d.Add(`apiVersion: v1
kind: ConfigMap
metadata:
  name: %s
  labels:
    %s: %s
data:
%s`, name, inventoryLabel, byHoldfast, lines.String())
	}
	return d.String()
}

// withoutManagedFields is an informer transform: neither watch here needs them.
func withoutManagedFields(obj any) (any, error) {
	if o, ok := obj.(metav1.Object); ok {
		o.SetManagedFields(nil)
	}
	return obj, nil
}

// configMapInformer starts an informer of the ConfigMaps matching selector in every namespace.
func configMapInformer(ctx context.Context, cs kubernetes.Interface, selector string, handler toolscache.ResourceEventHandler) error {
	f := informers.NewSharedInformerFactoryWithOptions(cs, 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = selector }),
		informers.WithTransform(withoutManagedFields))
	inf := f.Core().V1().ConfigMaps().Informer()
	if _, err := inf.AddEventHandler(handler); err != nil {
		return fmt.Errorf("watching ConfigMaps (%s): %w", selector, err)
	}
	f.Start(ctx.Done())
	if !toolscache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		return fmt.Errorf("watching ConfigMaps (%s): %w", selector, ctx.Err())
	}
	return nil
}

// observer is this program's own watch of every ConfigMap either corrector manages: it tells
// when an edited object was first seen back at its declared data.
type observer struct {
	mu    sync.Mutex
	objs  map[types.NamespacedName]*observed
	perNS map[string]int
}

// observed is the latest state of one ConfigMap as the watch delivered it.
type observed struct {
	declared bool
	// since and sinceRV are when and at which version it was first seen declared again, in
	// its latest declared stretch.
	since   time.Time
	sinceRV int64
}

func newObserver() *observer {
	return &observer{objs: map[types.NamespacedName]*observed{}, perNS: map[string]int{}}
}

func (o *observer) start(ctx context.Context, cs kubernetes.Interface) error {
	return configMapInformer(ctx, cs, inventoryLabel, toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { o.see(obj) },
		UpdateFunc: func(_, obj any) { o.see(obj) },
		DeleteFunc: o.gone,
	})
}

func (o *observer) see(obj any) {
	at := time.Now()
	cm, ok := obj.(*corev1.ConfigMap)
	if !ok {
		return
	}
	declared := maps.Equal(cm.Data, declaredData(cm.Name))
	key := types.NamespacedName{Namespace: cm.Namespace, Name: cm.Name}
	o.mu.Lock()
	defer o.mu.Unlock()
	s := o.objs[key]
	if s == nil {
		s = &observed{}
		o.objs[key] = s
		o.perNS[cm.Namespace]++
	}
	if declared && !s.declared {
		s.since, s.sinceRV = at, measure.ParseRV(cm.ResourceVersion)
	}
	s.declared = declared
}

func (o *observer) gone(obj any) {
	if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	cm, ok := obj.(*corev1.ConfigMap)
	if !ok {
		return
	}
	key := types.NamespacedName{Namespace: cm.Namespace, Name: cm.Name}
	o.mu.Lock()
	defer o.mu.Unlock()
	if _, ok := o.objs[key]; ok {
		delete(o.objs, key)
		o.perNS[cm.Namespace]--
	}
}

// correctedAfter reports when the ConfigMap was first seen back at its declared data in a
// version newer than rv.
func (o *observer) correctedAfter(ns, name string, rv int64) (time.Time, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	s := o.objs[types.NamespacedName{Namespace: ns, Name: name}]
	if s == nil || !s.declared || s.sinceRV <= rv {
		return time.Time{}, false
	}
	return s.since, true
}

// waitCount waits until the watch holds n ConfigMaps of namespace ns, all at their declared data.
func (o *observer) waitCount(ctx context.Context, ns string, n int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		o.mu.Lock()
		have, declared := o.perNS[ns], 0
		for k, s := range o.objs {
			if k.Namespace == ns && s.declared {
				declared++
			}
		}
		o.mu.Unlock()
		if have == n && declared == n {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("this program's watch holds %d ConfigMaps of %s (%d declared), not %d", have, ns, declared, n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// ideal is the baseline corrector: one label-selected watch of its ConfigMaps and, for each
// change that leaves an object's data other than declared, one forced server-side apply of the
// declared object. It reads nothing else, writes nothing else and keeps no inventory.
type ideal struct {
	cs         kubernetes.Interface
	mu         sync.Mutex
	namespaces map[string]bool // where it deployed
	// applies counts its corrections; errs its failed applies by message.
	applies atomic.Int64
	errs    map[string]int
}

func newIdeal(cs kubernetes.Interface) *ideal {
	return &ideal{cs: cs, namespaces: map[string]bool{}, errs: map[string]int{}}
}

func (c *ideal) start(ctx context.Context) error {
	return configMapInformer(ctx, c.cs, inventoryLabel+"="+byIdeal, toolscache.ResourceEventHandlerFuncs{
		UpdateFunc: func(_, obj any) { c.correct(ctx, obj) },
	})
}

// correct runs on the informer's goroutine: the apply is sent as soon as the change arrives.
func (c *ideal) correct(ctx context.Context, obj any) {
	cm, ok := obj.(*corev1.ConfigMap)
	if !ok || maps.Equal(cm.Data, declaredData(cm.Name)) {
		return
	}
	c.mu.Lock()
	mine := c.namespaces[cm.Namespace]
	c.mu.Unlock()
	if !mine {
		return
	}
	c.applies.Add(1)
	if err := c.apply(ctx, cm.Namespace, cm.Name); err != nil {
		c.fail(err)
	}
}

func (c *ideal) apply(ctx context.Context, ns, name string) error {
	cm := corev1ac.ConfigMap(name, ns).WithLabels(map[string]string{inventoryLabel: byIdeal}).WithData(declaredData(name))
	_, err := c.cs.CoreV1().ConfigMaps(ns).Apply(ctx, cm, metav1.ApplyOptions{FieldManager: idealManager, Force: true})
	return err
}

func (c *ideal) fail(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.errs[err.Error()]++
}

// failures describes the failed corrections, "" if none.
func (c *ideal) failures() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var parts []string
	for msg, n := range c.errs {
		parts = append(parts, fmt.Sprintf("%d × %s", n, msg))
	}
	sort.Strings(parts)
	return strings.Join(parts, "; ")
}

// deploy creates namespace ns and applies its n ConfigMaps.
func (c *ideal) deploy(ctx context.Context, ns string, n int) error {
	namespace := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{"app.kubernetes.io/part-of": "bench"}}}
	if _, err := c.cs.CoreV1().Namespaces().Create(ctx, namespace, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating namespace %s: %w", ns, err)
	}
	c.mu.Lock()
	c.namespaces[ns] = true
	c.mu.Unlock()
	jobs := make(chan int)
	errs := make([]error, idealWorkers)
	var wg sync.WaitGroup
	for w := range idealWorkers {
		wg.Go(func() {
			for i := range jobs {
				if err := c.apply(ctx, ns, configMapName(i)); err != nil && errs[w] == nil {
					errs[w] = fmt.Errorf("applying %s/%s: %w", ns, configMapName(i), err)
				}
			}
		})
	}
send:
	for i := range n {
		select {
		case jobs <- i:
		case <-ctx.Done():
			break send
		}
	}
	close(jobs)
	wg.Wait()
	return errors.Join(append(errs, ctx.Err())...)
}

// withdraw stops correcting in ns and deletes it.
func (c *ideal) withdraw(ctx context.Context, ns string) error {
	c.mu.Lock()
	delete(c.namespaces, ns)
	c.mu.Unlock()
	if err := c.cs.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting namespace %s: %w", ns, err)
	}
	return nil
}
