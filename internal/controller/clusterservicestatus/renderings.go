package clusterservicestatus

import (
	"context"
	"fmt"
	"strings"

	ctrl "sigs.k8s.io/controller-runtime"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/metrics"
	"holdfast.dev/holdfast/internal/render"
	"holdfast.dev/holdfast/internal/rendercache"
)

// renderService renders one service for a full reconcile, and returns the digest of its inputs
// ("" if it has none: the declaration is then not kept). A service whose inputs have the digest
// of prev, its last rendering in this process, is not rendered: prev holds that rendering. A
// Helm service is always rendered through kept, which reads the hub's copy of its rendering:
// another replica may have rendered it again since (the Secret deleted while it held the
// cluster), and the hub's copy is what stays.
func (r *Reconciler) renderService(ctx context.Context, kept *rendercache.Session, prev *declaration, req render.Request) (*render.Result, string, error) {
	input, err := r.digestOf(ctx, req)
	if err != nil {
		input = ""
	}
	if req.Source.Helm == nil && prev != nil && input != "" && prev.input == input {
		res, err := prev.rendering()
		if err == nil {
			metrics.RenderCacheRequest(metrics.RenderHit)
			return res, input, nil
		}
		ctrl.LoggerFrom(ctx).Info("Kept declaration unusable; rendering the service again", "service", req.Service, "reason", err.Error())
	}
	res, err := kept.Render(ctx, req.Service, req)
	switch {
	case err == nil && req.Source.Helm != nil && !kept.Fresh(req.Service):
		metrics.RenderCacheRequest(metrics.RenderKept)
	default:
		metrics.RenderCacheRequest(metrics.RenderMiss)
	}
	return res, input, err
}

// renderings keeps rendered Helm services on the hub between reconciles and restarts.
func (r *Reconciler) renderings() *rendercache.Store {
	return &rendercache.Store{Namespace: r.RenderingsNamespace, Client: r.Client, Reader: r.APIReader, Charts: r.Charts}
}

// keepRenderings keeps what was rendered anew and returns the services whose rendering is not
// kept. When the hub refuses to keep it, the services rendered anew fail with a transient
// problem instead of being applied: applied but not kept, their generated values would change
// again at the next reconcile.
func keepRenderings(ctx context.Context, kept *rendercache.Session, rendered []renderedService) []rendercache.Unkept {
	names := make([]string, 0, len(rendered))
	for _, rs := range rendered {
		names = append(names, rs.svc.Name)
	}
	log := ctrl.LoggerFrom(ctx)
	unkept, err := kept.Save(ctx, names)
	if err != nil {
		log.Error(err, "Cannot keep the renderings of Helm services; they are applied once kept")
		for i := range rendered {
			if rs := &rendered[i]; rs.err == nil && kept.Fresh(rs.svc.Name) {
				rs.objects, rs.digest, rs.transient = nil, "", true
				rs.err = &problem{holdfastv1.SourceUnavailableReason, fmt.Sprintf(
					"service %q: %v; it is applied once its rendering is kept, so that the values its chart generates stay", rs.svc.Name, err)}
			}
		}
	}
	for _, u := range unkept {
		log.Info("Rendering not kept; the service is rendered on every reconcile and values its chart generates change each time",
			"service", u.Service, "reason", u.Reason)
	}
	return unkept
}

// unkeptNote words the services whose rendering is not kept for the Rendered condition, "" if
// there are none.
func unkeptNote(unkept []rendercache.Unkept) string {
	if len(unkept) == 0 {
		return ""
	}
	notes := make([]string, 0, len(unkept))
	for _, u := range unkept {
		notes = append(notes, fmt.Sprintf("service %q is rendered on every reconcile, so values its chart generates change each time: %s", u.Service, u.Reason))
	}
	return "; " + strings.Join(notes, "; ")
}
