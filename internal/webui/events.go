package webui

import (
	"fmt"
	"net/http"
	"sync"
	"time"
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
