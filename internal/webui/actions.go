package webui

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"holdfast.dev/holdfast/internal/fleetview"
)

// actionResult is the answer to an action: what was done, or the hub's refusal.
type actionResult struct {
	OK      bool   `json:"ok"`
	Message string `json:"message"`
	// Back is the page to return to.
	Back string `json:"-"`
}

// serveCorrect asks for a full reconcile of a service set on one cluster, with the user's
// credentials: what `holdfast correct SET --cluster NS/CLUSTER` does. It corrects drift waiting
// for a human (action Report) and resumes correcting a Contested object alike.
func (s *Server) serveCorrect(w http.ResponseWriter, r *http.Request) {
	set, cluster := r.PostFormValue("set"), r.PostFormValue("cluster")
	ns, name, ok := strings.Cut(cluster, "/")
	if set == "" || !ok || ns == "" || name == "" {
		s.answer(w, r, http.StatusBadRequest, actionResult{Message: "a correction needs a service set (set) and a cluster (cluster, as namespace/name)"})
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), readTimeout)
	defer cancel()
	css, err := fleetview.FindStatus(ctx, s.client, set, ns, name)
	if err == nil {
		_, err = fleetview.RequestReconcile(ctx, s.client, css)
	}
	if err != nil {
		s.answer(w, r, statusCode(err), actionResult{Message: "Refused: " + err.Error()})
		return
	}
	s.answer(w, r, http.StatusOK, actionResult{OK: true, Message: fmt.Sprintf("Correction of service set %s on cluster %s requested.", set, cluster)})
}

// servePause pauses or resumes a service set (spec.paused), with the user's credentials.
func (s *Server) servePause(w http.ResponseWriter, r *http.Request) {
	set := r.PostFormValue("set")
	paused, err := strconv.ParseBool(r.PostFormValue("paused"))
	if set == "" || err != nil {
		s.answer(w, r, http.StatusBadRequest, actionResult{Message: "pausing needs a service set (set) and paused=true|false"})
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), readTimeout)
	defer cancel()
	res, err := fleetview.SetPaused(ctx, s.client, set, paused)
	if err != nil {
		s.answer(w, r, statusCode(err), actionResult{Message: "Refused: " + err.Error()})
		return
	}
	verb := "resumed"
	if res.Paused {
		verb = "paused"
	}
	msg := fmt.Sprintf("Service set %s %s.", set, verb)
	if !res.Changed {
		msg = fmt.Sprintf("Service set %s was already %s.", set, verb)
	}
	s.answer(w, r, http.StatusOK, actionResult{OK: true, Message: msg})
}

// answer writes an action's result: JSON to the script, which shows it in the page's live
// region; a page with a link back to a browser without JavaScript.
func (s *Server) answer(w http.ResponseWriter, r *http.Request, code int, res actionResult) {
	if !res.OK {
		s.log.Info("Action refused", "path", r.URL.Path, "reason", res.Message)
	}
	if strings.Contains(r.Header.Get("Accept"), "application/json") {
		writeJSON(w, code, res)
		return
	}
	// Back is one of the views (or the Preview page of the form's service set), whatever the form
	// said: never a link elsewhere.
	res.Back = navFleet
	if back := r.PostFormValue("back"); back == navDrift || back == navCharts || (r.PostFormValue("set") != "" && back == previewLink(r.PostFormValue("set"))) {
		res.Back = back
	}
	s.templates.render(w, "result", false, code, page{Title: "Action", Identity: s.identity, View: res})
}

// statusCode is the HTTP status of an error from the hub: the API server's own when it gave
// one (403 for RBAC, 404...), else 502.
func statusCode(err error) int {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		if code := int(status.Status().Code); code >= 400 && code < 600 {
			return code
		}
	}
	return http.StatusBadGateway
}
