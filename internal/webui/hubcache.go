package webui

import (
	"context"
	"fmt"

	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

// The pages are built from an informer cache of the hub's status objects, Clusters and service
// sets, filled by one List and kept current by a watch, both with the user's credentials: a
// page then costs its rendering, not a read and decoding of the whole fleet (bench/ui: 0.84 s
// of a 1.0–1.5 s page at 200 clusters before). The same watches tell the open pages that the
// hub changed. Until the cache has synced (and for good when the user may list but not watch,
// or may not list service sets), pages read the hub directly, page by page.

// watchedObjects are the hub's kinds the views show. In one namespace, service sets
// (cluster-scoped) are not cached: a tenant may not list them.
func (s *Server) watchedObjects() []client.Object {
	objs := []client.Object{&holdfastv1.ClusterServiceStatus{}, &holdfastv1.Cluster{}}
	if s.namespace == "" {
		objs = append(objs, &holdfastv1.MultiClusterService{})
	}
	return objs
}

// startCache starts the informers; every change they see is told to the open pages. The cache
// is used once all of them have synced.
func (s *Server) startCache(ctx context.Context) error {
	opts := cache.Options{Scheme: s.client.Scheme(), Mapper: s.client.RESTMapper()}
	if s.namespace != "" {
		opts.DefaultNamespaces = map[string]cache.Config{s.namespace: {}}
	}
	c, err := cache.New(s.cfg, opts)
	if err != nil {
		return fmt.Errorf("building a cache of the hub: %w", err)
	}
	notify := toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { s.changes.notify() },
		UpdateFunc: func(any, any) { s.changes.notify() },
		DeleteFunc: func(any) { s.changes.notify() },
	}
	for _, obj := range s.watchedObjects() {
		inf, err := c.GetInformer(ctx, obj, cache.BlockUntilSynced(false))
		if err != nil {
			return fmt.Errorf("watching %T on the hub: %w", obj, err)
		}
		if _, err := inf.AddEventHandler(notify); err != nil {
			return fmt.Errorf("watching %T on the hub: %w", obj, err)
		}
	}
	go func() {
		if err := c.Start(ctx); err != nil {
			s.log.Info("The cache of the hub stopped; pages read the hub directly", "error", err)
		}
	}()
	go func() {
		if c.WaitForCacheSync(ctx) {
			s.log.Info("The cache of the hub has synced; pages are built from it")
			s.cache.Store(&c)
			s.changes.notify()
		}
	}()
	return nil
}

// reader is where pages read the hub: the cache once it has synced, else the hub itself.
func (s *Server) reader() (client.Reader, bool) {
	if c := s.cache.Load(); c != nil {
		return *c, true
	}
	return s.client, false
}
