package webui

import (
	"context"
	"fmt"
	"net/http"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/fleetview"
)

// page is what every view renders: the layout's data and the view's own.
type page struct {
	Title    string
	Nav      string
	Identity string
	Now      time.Time
	// Error is why the hub could not be read; the view is then empty.
	Error string
	View  any
}

// Navigation entries: the path of each view.
const (
	navFleet  = "/"
	navDrift  = "/drift"
	navCharts = "/charts"
)

func (s *Server) serveFleet(w http.ResponseWriter, r *http.Request) {
	s.serveView(w, r, "fleet", "Fleet", navFleet, func(ctx context.Context) (any, error) {
		hub, _ := s.reader()
		clusters := &holdfastv1.ClusterList{}
		if err := hub.List(ctx, clusters, client.InNamespace(s.namespace)); err != nil {
			return nil, fmt.Errorf("listing Clusters: %w", err)
		}
		// Service sets the user may not list (a tenant) are known from their status objects.
		sets := &holdfastv1.MultiClusterServiceList{}
		if s.namespace == "" {
			if err := hub.List(ctx, sets); err != nil && !apierrors.IsForbidden(err) {
				return nil, fmt.Errorf("listing MultiClusterServices: %w", err)
			}
		}
		statuses, err := s.listStatuses(ctx)
		if err != nil {
			return nil, err
		}
		return buildFleet(clusters.Items, sets.Items, statuses, parseFleetFilter(r.URL.Query())), nil
	})
}

func (s *Server) serveDrift(w http.ResponseWriter, r *http.Request) {
	f := parseDriftFilter(r.URL.Query())
	title := "Drift"
	if f.Object != nil {
		title = "Timeline of " + f.Object.Kind + " " + f.Object.Name
	}
	s.serveView(w, r, "drift", title, navDrift, func(ctx context.Context) (any, error) {
		all, err := s.listStatuses(ctx)
		if err != nil {
			return nil, err
		}
		return buildDrift(all, statusSets(all), f), nil
	})
}

func (s *Server) serveCharts(w http.ResponseWriter, r *http.Request) {
	s.serveView(w, r, "charts", "Charts", navCharts, func(ctx context.Context) (any, error) {
		now := time.Now()
		fallback := s.promErr
		if s.prometheus != nil {
			page, err := s.prometheus.charts(ctx, now)
			if err == nil {
				return page, nil
			}
			fallback = err
		}
		statuses, err := s.listStatuses(ctx)
		if err != nil {
			return nil, err
		}
		page := buildCharts(fleetview.BuildDriftHistory(statuses, fleetview.Filter{}, time.Time{}, 0).Items, now)
		if fallback != nil {
			page.Source += "; Prometheus could not be used: " + fallback.Error()
		}
		return page, nil
	})
}

// listStatuses reads the status objects the views show (all, or those of the namespace), from
// the cache once it has synced.
func (s *Server) listStatuses(ctx context.Context) ([]holdfastv1.ClusterServiceStatus, error) {
	f := fleetview.Filter{ClusterNamespace: s.namespace}
	if r, cached := s.reader(); cached {
		return fleetview.ReadStatuses(ctx, r, s.client, f)
	}
	return fleetview.ListStatuses(ctx, s.client, f)
}

// serveView reads the hub for a view and renders it: the whole page, or with ?partial=1 only
// the view's data region (what the script fetches on a change). A hub that cannot be read
// gives the page with the API server's reason, and its status code when it has one.
func (s *Server) serveView(w http.ResponseWriter, r *http.Request, view, title, nav string, read func(context.Context) (any, error)) {
	ctx, cancel := context.WithTimeout(r.Context(), readTimeout)
	defer cancel()
	p := page{Title: title, Nav: nav, Identity: s.identity, Now: time.Now().UTC()}
	code := http.StatusOK
	data, err := read(ctx)
	if err != nil {
		p.Error, code = err.Error(), statusCode(err)
		s.log.Info("Could not read the hub for a page", "view", view, "error", err)
	}
	p.View = data
	s.templates.render(w, view, r.URL.Query().Get("partial") == "1", code, p)
}
