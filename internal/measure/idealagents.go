package measure

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"holdfast.dev/holdfast/internal/onboard"
)

// The ideal agents are the pull floor: the least any pull-mode drift controller must do for a
// change (issue 30, as issue 32's ideal controller is for Push mode), measured on the same API
// servers in the same run. Each simulated Pull cluster has an ideal agent, goroutines of this
// program with their watches open before the change: one watch on the hub of its own work
// Secret (IdealAgentsWork, in the cluster's hub namespace, onboard.PullNamespace) and one
// label-selected watch on its target of what it deploys. When its Secret names a new round it
// decodes the objects the Secret holds, sends each as one forced server-side apply and writes
// one status on the hub (the ConfigMap IdealAgentsStatus in its hub namespace) naming the round.
// The publishing side writes each cluster's Secret with one forced apply. Nothing is rendered,
// compared or recorded beyond that. Its objects are IdealObjects named with IdealAgentsPrefix
// instead and labelled IdealAgentsLabel, which only its own watches select, so that they leave
// Holdfast's objects and the other ideals' alone and nothing else sees them.

const (
	// IdealAgentsLabel marks the ideal agents' objects, Secrets and statuses; their target
	// watches select it.
	IdealAgentsLabel = "bench.holdfast.dev/pull-floor"
	// IdealAgentsPrefix starts the names of the ideal agents' objects.
	IdealAgentsPrefix = "pullfloor-"
	// IdealAgentsWork is the Secret, in each cluster's hub namespace, that the ideal agents'
	// work is published in; IdealAgentsStatus the ConfigMap beside it each agent writes its
	// status to.
	IdealAgentsWork   = "pullfloor-work"
	IdealAgentsStatus = "pullfloor-status"
	// idealAgentsRound and idealAgentsObjects are the keys of the work Secret's data (and
	// idealAgentsRound of the status's): the round and the objects as a JSON array.
	idealAgentsRound   = "round"
	idealAgentsObjects = "objects"
	// idealAgentsStartWorkers open the ideal agents' watches.
	idealAgentsStartWorkers = 32
)

// IdealAgents are the ideal agents of some simulated Pull clusters (see above), from
// StartIdealAgents until Stop.
type IdealAgents struct {
	fleet *SimFleet
	sims  []string
	// hub publishes their work and is what they watch and write their statuses through: no
	// client-side limit, as a controller's.
	hub  kubernetes.Interface
	stop context.CancelFunc
	// running are the agents' goroutines.
	running sync.WaitGroup

	mu sync.Mutex
	// done is, per cluster, the last round its agent wrote the status of and when, or how it
	// failed.
	done map[string]idealAgentRound
	// changed is signalled (without blocking) when done changes.
	changed chan struct{}
}

// idealAgentRound is what an ideal agent did last.
type idealAgentRound struct {
	round string
	at    time.Time
	err   error
}

// StartIdealAgents starts an ideal agent for each of sims and returns once every agent has its
// watches open; a round published before counts as applied (each agent lists its Secret and
// watches from there, as an informer does). Stop ends them. The clusters' hub namespaces must
// exist.
func (f *SimFleet) StartIdealAgents(ctx context.Context, sims []string) (*IdealAgents, error) {
	hubCfg := rest.CopyConfig(f.Fleet.Hub.RESTConfig())
	hubCfg.QPS, hubCfg.Burst = -1, 0
	hub, err := kubernetes.NewForConfig(hubCfg)
	if err != nil {
		return nil, fmt.Errorf("ideal agents: building their hub client: %w", err)
	}
	ctx, stop := context.WithCancel(ctx)
	a := &IdealAgents{fleet: f, sims: sims, hub: hub, stop: stop, done: map[string]idealAgentRound{}, changed: make(chan struct{}, 1)}
	err = Parallel(ctx, idealAgentsStartWorkers, len(sims), func(ctx context.Context, i int) error {
		return a.start(ctx, sims[i])
	})
	if err != nil {
		a.Stop()
		return nil, err
	}
	return a, nil
}

// start opens the watches of the agent of sim and starts its goroutines.
func (a *IdealAgents) start(ctx context.Context, sim string) error {
	ns := onboard.PullNamespace(sim)
	secrets := a.hub.CoreV1().Secrets(ns)
	own := metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", IdealAgentsWork).String()}
	list, err := secrets.List(ctx, own)
	if err != nil {
		return fmt.Errorf("ideal agent of %s: listing its work Secret on the hub: %w", sim, err)
	}
	last := ""
	for i := range list.Items {
		last = string(list.Items[i].Data[idealAgentsRound])
	}
	own.ResourceVersion = list.ResourceVersion
	work, err := secrets.Watch(ctx, own)
	if err != nil {
		return fmt.Errorf("ideal agent of %s: watching its work Secret on the hub: %w", sim, err)
	}
	deployed, err := a.fleet.Clientsets[a.fleet.Server[sim]].CoreV1().ConfigMaps(sim).Watch(ctx, metav1.ListOptions{LabelSelector: IdealAgentsLabel})
	if err != nil {
		work.Stop()
		return fmt.Errorf("ideal agent of %s: watching its objects on its cluster: %w", sim, err)
	}
	a.running.Go(func() { drain(ctx, deployed) })
	a.running.Go(func() { a.run(ctx, sim, work, last) })
	return nil
}

// drain reads w until ctx ends or w does, then stops it: the target watch of an agent, whose
// events a real agent would compare with what it declares.
func drain(ctx context.Context, w watch.Interface) {
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case _, ok := <-w.ResultChan():
			if !ok {
				return
			}
		}
	}
}

// run is the agent of sim: it applies each new round of its work Secret that work delivers
// (last is the round it has already applied) until ctx ends, and notes what it did.
func (a *IdealAgents) run(ctx context.Context, sim string, work watch.Interface, last string) {
	defer work.Stop()
	for {
		var ev watch.Event
		var ok bool
		select {
		case <-ctx.Done():
			return
		case ev, ok = <-work.ResultChan():
		}
		switch {
		case !ok:
			if ctx.Err() == nil {
				a.note(sim, idealAgentRound{err: fmt.Errorf("ideal agent of %s: the watch of its work Secret ended", sim)})
			}
			return
		case ev.Type == watch.Error:
			a.note(sim, idealAgentRound{err: fmt.Errorf("ideal agent of %s: watching its work Secret: %w", sim, apierrors.FromObject(ev.Object))})
			return
		}
		secret, ok := ev.Object.(*corev1.Secret)
		if !ok || ev.Type == watch.Deleted {
			continue
		}
		round := string(secret.Data[idealAgentsRound])
		if round == last {
			continue
		}
		err := a.apply(ctx, sim, secret)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			err = fmt.Errorf("ideal agent of %s, %s: %w", sim, round, err)
		}
		last = round
		a.note(sim, idealAgentRound{round: round, at: time.Now(), err: err})
	}
}

// apply sends each object of secret to sim's API server as one forced server-side apply, then
// writes the agent's status on the hub.
func (a *IdealAgents) apply(ctx context.Context, sim string, secret *corev1.Secret) error {
	var objs []map[string]any
	if err := json.Unmarshal(secret.Data[idealAgentsObjects], &objs); err != nil {
		return fmt.Errorf("decoding its work Secret's objects: %w", err)
	}
	cs := a.fleet.Clientsets[a.fleet.Server[sim]]
	opts := metav1.PatchOptions{FieldManager: IdealRolloutManager, Force: new(true)}
	for _, o := range objs {
		if err := applyIdeal(ctx, cs, &unstructured.Unstructured{Object: o}, opts); err != nil {
			return err
		}
	}
	status := corev1ac.ConfigMap(IdealAgentsStatus, secret.Namespace).WithLabels(map[string]string{IdealAgentsLabel: "true"}).
		WithData(map[string]string{idealAgentsRound: string(secret.Data[idealAgentsRound]), "objects": fmt.Sprint(len(objs)),
			"time": time.Now().UTC().Format(time.RFC3339Nano)})
	if _, err := a.hub.CoreV1().ConfigMaps(secret.Namespace).Apply(ctx, status, metav1.ApplyOptions{FieldManager: IdealRolloutManager, Force: true}); err != nil {
		return fmt.Errorf("writing its status on the hub: %w", err)
	}
	return nil
}

// note records what the agent of sim did last and wakes Rollout.
func (a *IdealAgents) note(sim string, r idealAgentRound) {
	a.mu.Lock()
	a.done[sim] = r
	a.mu.Unlock()
	select {
	case a.changed <- struct{}{}:
	default:
	}
}

// Stop ends the agents and waits until their goroutines, and with them their watches, ended.
func (a *IdealAgents) Stop() {
	a.stop()
	a.running.Wait()
}

// IdealAgentsObjects are objs as the ideal agents apply them: named with IdealAgentsPrefix
// instead of IdealPrefix and labelled IdealAgentsLabel.
func IdealAgentsObjects(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	out := make([]*unstructured.Unstructured, len(objs))
	for i, o := range objs {
		c := o.DeepCopy()
		labels := c.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		labels[IdealAgentsLabel] = "true"
		c.SetLabels(labels)
		c.SetName(IdealAgentsPrefix + strings.TrimPrefix(o.GetName(), IdealPrefix))
		out[i] = c
	}
	return out
}

// Rollout publishes objs (IdealObjects; IdealAgentsObjects renames them) to every agent as
// round, in each one's work Secret with its cluster's namespace set, one forced apply per
// cluster with workers at a time, while the agents apply them. It returns the wall time from
// the start of publishing until the last agent wrote its status naming round, or the agents'
// errors; it gives up when ctx ends.
func (a *IdealAgents) Rollout(ctx context.Context, objs []*unstructured.Unstructured, workers int, round string) (time.Duration, error) {
	objs = IdealAgentsObjects(objs)
	ctx, cancel := context.WithCancel(ctx)
	// publishing carries the publishing's outcome; nil once read. Returning before, Rollout
	// ends the publishing and waits for it.
	publishing := make(chan error, 1)
	defer func() {
		cancel()
		if publishing != nil {
			<-publishing
		}
	}()
	began := time.Now()
	go func() {
		publishing <- Parallel(ctx, workers, len(a.sims), func(ctx context.Context, i int) error {
			return a.publish(ctx, a.sims[i], objs, round)
		})
	}()
	for {
		last, n, errs := a.tally(round)
		if len(errs) > 0 {
			return 0, errors.Join(errs...)
		}
		if n == len(a.sims) {
			if publishing != nil { // every agent has read its Secret: the publishing is ending
				err := <-publishing
				if publishing = nil; err != nil {
					return 0, err
				}
			}
			return last.Sub(began), nil
		}
		select {
		case err := <-publishing:
			publishing = nil
			if err != nil {
				return 0, err
			}
		case <-a.changed:
		case <-ctx.Done():
			return 0, fmt.Errorf("ideal agents: %d of %d clusters wrote the status of %s: %w", n, len(a.sims), round, ctx.Err())
		}
	}
}

// tally is when the last agent done with round wrote its status, how many are done with it,
// and the agents' errors.
func (a *IdealAgents) tally(round string) (last time.Time, n int, errs []error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, sim := range a.sims {
		r := a.done[sim]
		switch {
		case r.err != nil:
			errs = append(errs, r.err)
		case r.round == round:
			n++
			if r.at.After(last) {
				last = r.at
			}
		}
	}
	return last, n, errs
}

// publish writes the work Secret of sim: objs in its namespace, and round.
func (a *IdealAgents) publish(ctx context.Context, sim string, objs []*unstructured.Unstructured, round string) error {
	own := make([]map[string]any, len(objs))
	for i, o := range objs {
		c := o.DeepCopy()
		c.SetNamespace(sim)
		own[i] = c.Object
	}
	data, err := json.Marshal(own)
	if err != nil {
		return fmt.Errorf("ideal agents: encoding the objects of %s: %w", sim, err)
	}
	ns := onboard.PullNamespace(sim)
	secret := corev1ac.Secret(IdealAgentsWork, ns).WithLabels(map[string]string{IdealAgentsLabel: "true"}).
		WithData(map[string][]byte{idealAgentsRound: []byte(round), idealAgentsObjects: data})
	if _, err := a.hub.CoreV1().Secrets(ns).Apply(ctx, secret, metav1.ApplyOptions{FieldManager: IdealRolloutManager, Force: true}); err != nil {
		return fmt.Errorf("ideal agents: publishing the work of %s: %w", sim, err)
	}
	return nil
}

// Check reads what the agents left after Rollout of objs as round: every agent's status on the
// hub names round, and every object is on its cluster, a ConfigMap with the data published. It
// lists each kind once per API server.
func (a *IdealAgents) Check(ctx context.Context, objs []*unstructured.Unstructured, round string) error {
	objs = IdealAgentsObjects(objs)
	selector := metav1.ListOptions{LabelSelector: IdealAgentsLabel}
	statuses, err := a.hub.CoreV1().ConfigMaps("").List(ctx, selector)
	if err != nil {
		return fmt.Errorf("ideal agents: listing their statuses on the hub: %w", err)
	}
	wrote := map[string]string{}
	for _, cm := range statuses.Items {
		if cm.Name == IdealAgentsStatus {
			wrote[cm.Namespace] = cm.Data[idealAgentsRound]
		}
	}
	// present are the objects on the clusters, by "kind namespace/name", with a ConfigMap's data.
	present := map[string]map[string]string{}
	for _, cs := range a.fleet.Clientsets {
		if err := listPresent(ctx, cs, selector, present); err != nil {
			return err
		}
	}
	var errs []error
	for _, sim := range a.sims {
		if got := wrote[onboard.PullNamespace(sim)]; got != round {
			errs = append(errs, fmt.Errorf("the ideal agent of %s wrote the status of %q, not %q", sim, got, round))
		}
		for _, o := range objs {
			key := fmt.Sprintf("%s %s/%s", o.GetKind(), sim, o.GetName())
			data, ok := present[key]
			if !ok {
				errs = append(errs, fmt.Errorf("the ideal agent of %s did not apply %s", sim, key))
				continue
			}
			if want, _, _ := unstructured.NestedStringMap(o.Object, "data"); o.GetKind() == "ConfigMap" && !maps.Equal(data, want) {
				errs = append(errs, fmt.Errorf("the ideal agent of %s left %s with data %v, not %v", sim, key, data, want))
			}
		}
	}
	return errors.Join(errs...)
}

// listPresent adds the ConfigMaps, Secrets and ServiceAccounts selected on cs to present (see
// Check).
func listPresent(ctx context.Context, cs kubernetes.Interface, selector metav1.ListOptions, present map[string]map[string]string) error {
	core := cs.CoreV1()
	cms, err := core.ConfigMaps("").List(ctx, selector)
	if err != nil {
		return fmt.Errorf("ideal agents: listing their ConfigMaps: %w", err)
	}
	for _, o := range cms.Items {
		present["ConfigMap "+o.Namespace+"/"+o.Name] = o.Data
	}
	secrets, err := core.Secrets("").List(ctx, selector)
	if err != nil {
		return fmt.Errorf("ideal agents: listing their Secrets: %w", err)
	}
	for _, o := range secrets.Items {
		present["Secret "+o.Namespace+"/"+o.Name] = nil
	}
	sas, err := core.ServiceAccounts("").List(ctx, selector)
	if err != nil {
		return fmt.Errorf("ideal agents: listing their ServiceAccounts: %w", err)
	}
	for _, o := range sas.Items {
		present["ServiceAccount "+o.Namespace+"/"+o.Name] = nil
	}
	return nil
}
