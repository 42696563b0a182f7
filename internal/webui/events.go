package webui

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

// heartbeat keeps an idle event stream open through proxies, and lets the server notice a
// page that went away.
const heartbeat = 15 * time.Second

// changes tells the open pages that the hub changed. A page's channel holds one signal: any
// number of changes before the page reads it are one fetch of the view, so a busy fleet costs a
// page one fetch at a time, never a backlog.
type changes struct {
	mu    sync.Mutex
	pages map[chan struct{}]struct{}
}

func (c *changes) subscribe() chan struct{} {
	ch := make(chan struct{}, 1)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pages == nil {
		c.pages = map[chan struct{}]struct{}{}
	}
	c.pages[ch] = struct{}{}
	return ch
}

func (c *changes) unsubscribe(ch chan struct{}) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.pages, ch)
}

func (c *changes) notify() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for ch := range c.pages {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// watchedLists are the hub's objects the views show; a change to any of them is a change. In
// one namespace, service sets (cluster-scoped) are not watched: a tenant may not.
func (s *Server) watchedLists() []client.ObjectList {
	lists := []client.ObjectList{&holdfastv1.ClusterServiceStatusList{}, &holdfastv1.ClusterList{}}
	if s.namespace == "" {
		lists = append(lists, &holdfastv1.MultiClusterServiceList{})
	}
	return lists
}

// watchHub watches each list with the user's credentials until ctx is done, notifying c of
// every change. A watch that ends (expired resource version, RBAC, the hub restarting) is
// started again with a backoff; the pages keep working without live updates meanwhile.
func (s *Server) watchHub(ctx context.Context) {
	var wg sync.WaitGroup
	for _, list := range s.watchedLists() {
		wg.Go(func() {
			backoff := wait.Backoff{Duration: time.Second, Factor: 2, Jitter: 0.2, Steps: 6, Cap: time.Minute}
			for ctx.Err() == nil {
				err := s.watchList(ctx, list)
				if ctx.Err() != nil {
					return
				}
				s.log.Info("Watch of the hub ended; starting it again", "list", fmt.Sprintf("%T", list), "error", err)
				select {
				case <-ctx.Done():
				case <-time.After(backoff.Step()):
				}
			}
		})
	}
	wg.Wait()
}

// watchList lists to learn the current resource version, then watches from it with client-go's
// RetryWatcher (which resumes from the last version it saw) until the watch fails for good.
func (s *Server) watchList(ctx context.Context, list client.ObjectList) error {
	if err := s.client.List(ctx, list, client.Limit(1), client.InNamespace(s.namespace)); err != nil {
		return fmt.Errorf("listing: %w", err)
	}
	w, err := watchtools.NewRetryWatcherWithContext(ctx, list.GetResourceVersion(), listWatcher{s.client, list, s.namespace})
	if err != nil {
		return err
	}
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-w.Done():
			return fmt.Errorf("watch ended")
		case ev, ok := <-w.ResultChan():
			if !ok {
				return fmt.Errorf("watch closed")
			}
			switch ev.Type {
			case watch.Added, watch.Modified, watch.Deleted:
				s.changes.notify()
			case watch.Error:
				return fmt.Errorf("watch error: %v", ev.Object)
			}
		}
	}
}

// listWatcher adapts a controller-runtime client to cache.WatcherWithContext.
type listWatcher struct {
	c         client.WithWatch
	list      client.ObjectList
	namespace string
}

var _ cache.WatcherWithContext = listWatcher{}

func (l listWatcher) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	return l.c.Watch(ctx, l.list.DeepCopyObject().(client.ObjectList), &client.ListOptions{Raw: &opts, Namespace: l.namespace})
}

// serveEvents streams a "changed" event each time the hub changed, until the page goes away.
func (s *Server) serveEvents(w http.ResponseWriter, r *http.Request) {
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	ch := s.changes.subscribe()
	defer s.changes.unsubscribe(ch)
	fmt.Fprint(w, "retry: 2000\n: connected\n\n")
	flusher.Flush()
	tick := time.NewTicker(heartbeat)
	defer tick.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-ch:
			fmt.Fprint(w, "event: changed\ndata: {}\n\n")
		case <-tick.C:
			fmt.Fprint(w, ": heartbeat\n\n")
		}
		flusher.Flush()
	}
}
