package webui

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/fleetview"
)

// A service set whose rollout has approval Manual holds each new revision, previews it on every
// matching cluster and waits until a human approves it. The Preview page shows the controller's
// bounded summary of that preview (status.rollout.preview) and, while the revision waits, an
// Approve button that writes holdfastv1.RolloutApproveAnnotation with the user's credentials,
// as `holdfast rollout approve` does. The button approves the revision the page showed, and the
// server refuses it if the service set holds another one by then: what was reviewed is what is
// approved.

// previewLink is the Preview page of a service set.
func previewLink(set string) string { return "/preview/" + url.PathEscape(set) }

// hasPreview reports whether a service set has something for the Preview page: a revision held
// for approval, or the preview of one.
func hasPreview(mcs *holdfastv1.MultiClusterService) bool {
	ro := mcs.Status.Rollout
	return ro != nil && (ro.Phase.AwaitsApproval() || ro.Preview != nil)
}

// previewPage is a service set's rollout preview and its approval.
type previewPage struct {
	Set  string
	Link string
	// Revision and Phase are the rollout's (status.rollout); Revision is "" when the service
	// set has no rollout status.
	Revision, Phase string
	// Held: the revision waits for approval, and the page offers to approve it.
	Held bool
	// Preview is the summary, nil when none was recorded; OtherRevision is set when it is of
	// another revision than Revision.
	Preview       *previewSummary
	OtherRevision string
	Approval      *approvalView
}

// previewSummary is status.rollout.preview as the page shows it.
type previewSummary struct {
	Revision            string
	Clusters, Previewed int
	// Counts are the clusters by outcome, in a fixed order.
	Counts        []outcomeCount
	Groups        []previewGroup
	OmittedGroups int
}

type outcomeCount struct {
	Label string
	Count int
}

// previewGroup is clusters whose previews found the same changes.
type previewGroup struct {
	Outcome string
	// Selection is "newly selected" or "no longer selected" (a changed cluster selector), or "".
	Selection string
	Clusters  int
	// Examples name a few clusters; Unnamed counts the others.
	Examples []string
	Unnamed  int
	// Message is the API server's refusal, or why a preview failed or cannot be made.
	Message        string
	Changes        []holdfastv1.PreviewChange
	OmittedChanges int
}

// approvalView is status.rollout.approval.
type approvalView struct {
	Revision string
	By       string
	Verified bool
	Time     time.Time
	// PreviewComplete: every matching cluster had been previewed when it was approved;
	// PreviewChanged: the preview of that revision differs now from the one approved.
	PreviewComplete bool
	PreviewChanged  bool
}

// buildPreview makes the Preview page of a service set.
func buildPreview(mcs *holdfastv1.MultiClusterService) previewPage {
	p := previewPage{Set: mcs.Name, Link: previewLink(mcs.Name)}
	ro := mcs.Status.Rollout
	if ro == nil {
		return p
	}
	p.Revision, p.Phase, p.Held = ro.Revision, string(ro.Phase), ro.Phase.AwaitsApproval()
	if pv := ro.Preview; pv != nil {
		p.Preview = summarize(pv)
		if pv.Revision != ro.Revision {
			p.OtherRevision = pv.Revision
		}
	}
	if a := ro.Approval; a != nil {
		p.Approval = &approvalView{Revision: a.Revision, By: a.By, Verified: a.Verified, Time: a.Time.UTC(), PreviewComplete: a.PreviewComplete,
			PreviewChanged: ro.Preview != nil && ro.Preview.Revision == a.Revision && a.PreviewDigest != "" && a.PreviewDigest != ro.Preview.Digest}
	}
	return p
}

func summarize(pv *holdfastv1.RolloutPreview) *previewSummary {
	s := &previewSummary{Revision: pv.Revision, Clusters: int(pv.Clusters), Previewed: int(pv.Previewed), OmittedGroups: int(pv.OmittedGroups),
		Counts: []outcomeCount{
			{"No change", int(pv.NoChange)}, {"Changes", int(pv.Changed)}, {"Refused", int(pv.Refused)},
			{"Failed", int(pv.Failed)}, {"Unsupported", int(pv.Unsupported)},
		}}
	for _, g := range pv.Groups {
		s.Groups = append(s.Groups, previewGroup{Outcome: string(g.Outcome), Selection: fleetview.SelectionText(string(g.Selection)), Clusters: int(g.Clusters), Examples: g.Examples,
			Unnamed: max(0, int(g.Clusters)-len(g.Examples)), Message: g.Message, Changes: g.Changes, OmittedChanges: int(g.OmittedChanges)})
	}
	return s
}

func (s *Server) servePreview(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	s.serveView(w, r, "preview", "Preview of "+name, "", func(ctx context.Context) (any, error) {
		// In one namespace service sets are not cached (a tenant may not list them): the hub
		// answers, or refuses.
		var hub client.Reader = s.client
		if c, cached := s.reader(); cached && s.namespace == "" {
			hub = c
		}
		mcs := &holdfastv1.MultiClusterService{}
		if err := hub.Get(ctx, client.ObjectKey{Name: name}, mcs); err != nil {
			return nil, fmt.Errorf("reading MultiClusterService %s: %w", name, err)
		}
		return buildPreview(mcs), nil
	})
}

// serveApprove approves the revision the Preview page showed, with the user's credentials.
func (s *Server) serveApprove(w http.ResponseWriter, r *http.Request) {
	set, revision := r.PostFormValue("set"), r.PostFormValue("revision")
	if set == "" || revision == "" {
		s.answer(w, r, http.StatusBadRequest, actionResult{Message: "approving needs a service set (set) and the revision the page showed (revision)"})
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), readTimeout)
	defer cancel()
	value, err := approveRevision(ctx, s.client, set, revision, time.Now())
	if err != nil {
		code := statusCode(err)
		var stale *staleRevisionError
		if errors.As(err, &stale) {
			code = http.StatusConflict
		}
		s.answer(w, r, code, actionResult{Message: "Refused: " + err.Error()})
		return
	}
	s.answer(w, r, http.StatusOK, actionResult{OK: true, Message: fmt.Sprintf("Approved revision %s of service set %s (%s=%s); it rolls out once the controller has handled the approval.",
		revision, set, holdfastv1.RolloutApproveAnnotation, value)})
}

// staleRevisionError: the service set no longer holds for approval the revision the page
// showed.
type staleRevisionError struct{ msg string }

func (e *staleRevisionError) Error() string { return e.msg }

// checkHeld returns a staleRevisionError unless mcs holds revision for approval, as `holdfast
// rollout approve --revision` decides (fleetview.CheckApproval), saying so in the page's terms
// when another revision is held now.
func checkHeld(mcs *holdfastv1.MultiClusterService, revision string) error {
	_, err := fleetview.CheckApproval(mcs, cmp.Or(revision, "(none)"))
	if err == nil {
		return nil
	}
	if ro := mcs.Status.Rollout; ro != nil && ro.Phase.AwaitsApproval() && ro.Revision != revision {
		return &staleRevisionError{fmt.Sprintf("the revision changed since this page was loaded; review the new preview (service set %s holds revision %s now, the page showed %s)",
			mcs.Name, ro.Revision, revision)}
	}
	return &staleRevisionError{err.Error()}
}

// approveRevision approves revision of a service set with c's credentials, as `holdfast rollout
// approve` does: it sets holdfastv1.RolloutApproveAnnotation to "<revision> <time>" (new each
// time) with a merge patch, and returns that value. It does so only while the service set holds
// that revision for approval, and the patch carries the resourceVersion of the object it checked,
// so that the API server refuses it (Conflict) if the service set changed in between; it is then
// read and checked again. The API server's refusal (RBAC among them) is returned wrapped.
func approveRevision(ctx context.Context, c client.Client, set, revision string, now time.Time) (string, error) {
	value := holdfastv1.ApproveValue(revision, now)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		mcs := &holdfastv1.MultiClusterService{}
		if err := c.Get(ctx, client.ObjectKey{Name: set}, mcs); err != nil {
			return fmt.Errorf("reading MultiClusterService %s: %w", set, err)
		}
		if err := checkHeld(mcs, revision); err != nil {
			return err
		}
		patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
			"resourceVersion": mcs.ResourceVersion,
			"annotations":     map[string]string{holdfastv1.RolloutApproveAnnotation: value},
		}})
		if err != nil {
			return err
		}
		if err := c.Patch(ctx, mcs, client.RawPatch(types.MergePatchType, patch)); err != nil {
			return fmt.Errorf("approving revision %s of MultiClusterService %s: %w", revision, set, err)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	return value, nil
}
