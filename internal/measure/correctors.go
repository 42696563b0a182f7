package measure

import (
	"context"
	"errors"
	"fmt"
	"os"
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
)

// What the drift benchmarks that compare Holdfast with an ideal corrector share: this program's
// own watch of the edited ConfigMaps (Observer), the ideal corrector (Ideal) and the edit that
// waits for its correction (Edit).

// ValueKey is the ConfigMap data key the benchmarks' edits change.
const ValueKey = "value"

// DeclaredValue is the declared value of ValueKey of the ConfigMap name, for both correctors.
func DeclaredValue(name string) string { return "declared-" + name }

// slimConfigMap returns an informer transform: the benchmarks' watches need a ConfigMap's
// identity, version, labels and ValueKey (and the data keys given) only, so that their caches of
// thousands of objects stay small beside the controller's in the same process.
func slimConfigMap(keys ...string) toolscache.TransformFunc {
	keys = append([]string{ValueKey}, keys...)
	return func(obj any) (any, error) {
		cm, ok := obj.(*corev1.ConfigMap)
		if !ok {
			return obj, nil
		}
		slim := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
			Namespace: cm.Namespace, Name: cm.Name, ResourceVersion: cm.ResourceVersion, Labels: cm.Labels,
		}}
		for _, k := range keys {
			if v, ok := cm.Data[k]; ok {
				if slim.Data == nil {
					slim.Data = map[string]string{}
				}
				slim.Data[k] = v
			}
		}
		return slim, nil
	}
}

// ConfigMapInformer starts an informer of the ConfigMaps matching selector in every namespace
// and waits until it synced. Its objects keep ValueKey and the data keys given, no other data.
func ConfigMapInformer(ctx context.Context, cs kubernetes.Interface, selector string, handler toolscache.ResourceEventHandler, keys ...string) error {
	f := informers.NewSharedInformerFactoryWithOptions(cs, 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = selector }),
		informers.WithTransform(slimConfigMap(keys...)))
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

// declared reports whether a ConfigMap holds its declared ValueKey.
func declared(cm *corev1.ConfigMap) bool { return cm.Data[ValueKey] == DeclaredValue(cm.Name) }

// Observer is this program's own watch of the ConfigMaps either corrector manages, on one API
// server: it tells when an edited object was first seen back at its declared value.
type Observer struct {
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

// NewObserver returns an Observer; Start starts its watch.
func NewObserver() *Observer {
	return &Observer{objs: map[types.NamespacedName]*observed{}, perNS: map[string]int{}}
}

// Start watches the ConfigMaps that have the label key label, in every namespace.
func (o *Observer) Start(ctx context.Context, cs kubernetes.Interface, label string) error {
	return ConfigMapInformer(ctx, cs, label, toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { o.see(obj) },
		UpdateFunc: func(_, obj any) { o.see(obj) },
		DeleteFunc: o.gone,
	})
}

func (o *Observer) see(obj any) {
	at := time.Now()
	cm, ok := obj.(*corev1.ConfigMap)
	if !ok {
		return
	}
	isDeclared := declared(cm)
	key := types.NamespacedName{Namespace: cm.Namespace, Name: cm.Name}
	o.mu.Lock()
	defer o.mu.Unlock()
	s := o.objs[key]
	if s == nil {
		s = &observed{}
		o.objs[key] = s
		o.perNS[cm.Namespace]++
	}
	if isDeclared && !s.declared {
		s.since, s.sinceRV = at, ParseRV(cm.ResourceVersion)
	}
	s.declared = isDeclared
}

func (o *Observer) gone(obj any) {
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

// CorrectedAfter reports when the ConfigMap was first seen back at its declared value in a
// version newer than rv.
func (o *Observer) CorrectedAfter(ns, name string, rv int64) (time.Time, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	s := o.objs[types.NamespacedName{Namespace: ns, Name: name}]
	if s == nil || !s.declared || s.sinceRV <= rv {
		return time.Time{}, false
	}
	return s.since, true
}

// Count is how many ConfigMaps of namespace ns the watch holds, and how many of them are at
// their declared value.
func (o *Observer) Count(ns string) (have, atDeclared int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for k, s := range o.objs {
		if k.Namespace == ns && s.declared {
			atDeclared++
		}
	}
	return o.perNS[ns], atDeclared
}

// WaitCount waits until the watch holds n ConfigMaps of namespace ns, all at their declared value.
func (o *Observer) WaitCount(ctx context.Context, ns string, n int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		have, atDeclared := o.Count(ns)
		if have == n && atDeclared == n {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("this program's watch holds %d ConfigMaps of %s (%d declared), not %d", have, ns, atDeclared, n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Ideal is the baseline corrector: one label-selected watch of its ConfigMaps and, for each
// change that leaves an object's value other than declared, one forced server-side apply of the
// declared object. It reads nothing else, writes nothing else and keeps no inventory.
type Ideal struct {
	cs kubernetes.Interface
	// label and value mark its ConfigMaps (label=value); data is what it declares besides
	// ValueKey.
	label, value string
	data         map[string]string
	mu           sync.Mutex
	namespaces   map[string]bool // where it deployed
	// applies counts its corrections; errs its failed applies by message.
	applies atomic.Int64
	errs    map[string]int
}

// IdealManager is the ideal corrector's field manager.
const IdealManager = "ideal"

// IdealWorkers apply the ideal's ConfigMaps at deployment.
const IdealWorkers = 8

// NewIdeal returns an ideal corrector of the ConfigMaps labelled label=value through cs (give it a
// client of its own, not rate-limited); each declares ValueKey and data.
func NewIdeal(cs kubernetes.Interface, label, value string, data map[string]string) *Ideal {
	return &Ideal{cs: cs, label: label, value: value, data: data, namespaces: map[string]bool{}, errs: map[string]int{}}
}

// Start starts its watch.
func (c *Ideal) Start(ctx context.Context) error {
	return ConfigMapInformer(ctx, c.cs, c.label+"="+c.value, toolscache.ResourceEventHandlerFuncs{
		UpdateFunc: func(_, obj any) { c.correct(ctx, obj) },
	})
}

// Applies is how many corrections it sent.
func (c *Ideal) Applies() int64 { return c.applies.Load() }

// correct runs on the informer's goroutine: the apply is sent as soon as the change arrives.
func (c *Ideal) correct(ctx context.Context, obj any) {
	cm, ok := obj.(*corev1.ConfigMap)
	if !ok || declared(cm) {
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

func (c *Ideal) apply(ctx context.Context, ns, name string) error {
	data := map[string]string{ValueKey: DeclaredValue(name)}
	for k, v := range c.data {
		data[k] = v
	}
	cm := corev1ac.ConfigMap(name, ns).WithLabels(map[string]string{c.label: c.value}).WithData(data)
	_, err := c.cs.CoreV1().ConfigMaps(ns).Apply(ctx, cm, metav1.ApplyOptions{FieldManager: IdealManager, Force: true})
	return err
}

func (c *Ideal) fail(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.errs[err.Error()]++
}

// Failures describes the failed corrections, "" if none.
func (c *Ideal) Failures() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var parts []string
	for msg, n := range c.errs {
		parts = append(parts, fmt.Sprintf("%d × %s", n, msg))
	}
	sort.Strings(parts)
	return strings.Join(parts, "; ")
}

// Deploy creates namespace ns and applies the ConfigMaps names there.
func (c *Ideal) Deploy(ctx context.Context, ns string, names []string) error {
	namespace := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{"app.kubernetes.io/part-of": "bench"}}}
	if _, err := c.cs.CoreV1().Namespaces().Create(ctx, namespace, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating namespace %s: %w", ns, err)
	}
	c.mu.Lock()
	c.namespaces[ns] = true
	c.mu.Unlock()
	return Parallel(ctx, IdealWorkers, len(names), func(ctx context.Context, i int) error {
		if err := c.apply(ctx, ns, names[i]); err != nil {
			return fmt.Errorf("applying %s/%s: %w", ns, names[i], err)
		}
		return nil
	})
}

// Withdraw stops correcting in ns and deletes it.
func (c *Ideal) Withdraw(ctx context.Context, ns string) error {
	c.mu.Lock()
	delete(c.namespaces, ns)
	c.mu.Unlock()
	if err := c.cs.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting namespace %s: %w", ns, err)
	}
	return nil
}

// Parallel runs do(i) for i in [0, n) on workers goroutines and returns the first error of each
// worker, joined; it stops handing out work once ctx is done.
func Parallel(ctx context.Context, workers, n int, do func(ctx context.Context, i int) error) error {
	jobs := make(chan int)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range jobs {
				if err := do(ctx, i); err != nil && errs[w] == nil {
					errs[w] = err
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

// EditRun is one edit and its correction.
type EditRun struct {
	Namespace, Name string
	// Value is what the edit wrote to ValueKey.
	Value string
	// TSend is just before the Update, T0 when it returned; RespRV is the version it wrote.
	TSend, T0 time.Time
	RespRV    int64
	Corrected time.Time // zero: never seen corrected
	Err       error
}

// Edit changes ValueKey of one ConfigMap as field manager editor (retrying a conflict) and waits
// up to timeout until obs sees it back at its declared value.
func Edit(ctx context.Context, cs kubernetes.Interface, obs *Observer, editor, ns, name string, seq int, timeout time.Duration) *EditRun {
	e := &EditRun{Namespace: ns, Name: name, Value: fmt.Sprintf("edited-%d", seq)}
	cms := cs.CoreV1().ConfigMaps(ns)
	for attempt := 0; ; attempt++ {
		cm, err := cms.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			e.Err = fmt.Errorf("reading %s/%s: %w", ns, name, err)
			break
		}
		if cm.Data == nil {
			cm.Data = map[string]string{}
		}
		cm.Data[ValueKey] = e.Value
		e.TSend = time.Now()
		cm, err = cms.Update(ctx, cm, metav1.UpdateOptions{FieldManager: editor})
		e.T0 = time.Now()
		if apierrors.IsConflict(err) && attempt < 5 {
			continue
		}
		if err != nil {
			e.Err = fmt.Errorf("editing %s/%s: %w", ns, name, err)
		} else {
			e.RespRV = ParseRV(cm.ResourceVersion)
		}
		break
	}
	if e.Err != nil {
		fmt.Fprintf(os.Stderr, "edit %d: %v\n", seq, e.Err)
		return e
	}
	deadline := e.T0.Add(timeout)
	for {
		if at, ok := obs.CorrectedAfter(ns, name, e.RespRV); ok {
			e.Corrected = at
			return e
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			fmt.Fprintf(os.Stderr, "edit %d of %s/%s: not corrected after %s\n", seq, ns, name, timeout)
			return e
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// Latencies are the correction latencies of the edits seen corrected, and how many failed or
// were not seen corrected.
func Latencies(runs []*EditRun) (ds []time.Duration, failed, uncorrected int) {
	for _, e := range runs {
		switch {
		case e.Err != nil:
			failed++
		case e.Corrected.IsZero():
			uncorrected++
		default:
			ds = append(ds, e.Corrected.Sub(e.T0))
		}
	}
	return ds, failed, uncorrected
}
