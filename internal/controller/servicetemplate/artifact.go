package servicetemplate

import (
	"context"
	"errors"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/render"
	"holdfast.dev/holdfast/internal/templatesource"
)

// defaultArtifactInterval is how often spec.artifact is resolved again when it sets no interval.
const defaultArtifactInterval = time.Minute

// checkArtifact resolves spec.artifact, pins what it resolved to in status.artifact, and
// downloads that: a download that does not match the digest, or files that cannot be
// rendered in the format asked for, make the source unavailable. The pin follows the source
// even then, so that every cluster reports the same refusal and keeps what it applied; a
// source that cannot be resolved keeps the last pin. It is checked again at the interval, so
// a new revision is pinned and rolled out.
func (r *Reconciler) checkArtifact(ctx context.Context, sources templatesource.Reader, t *holdfastv1.ServiceTemplate) (string, string, time.Duration) {
	interval := defaultArtifactInterval
	if i := t.Spec.Artifact.Interval; i != nil && i.Duration > 0 {
		interval = i.Duration
	}
	resolved, err := sources.ResolveArtifact(ctx, t)
	if err != nil {
		return artifactProblem(err, interval)
	}
	if p := t.Status.Artifact; p == nil || p.URL != resolved.URL || p.Digest != resolved.Digest || p.Revision != resolved.Revision {
		now := time.Now
		if r.Now != nil {
			now = r.Now
		}
		resolved.FetchedTime = &metav1.Time{Time: now().Truncate(time.Second)}
		t.Status.Artifact = &resolved
	}
	src, err := sources.Source(ctx, t)
	if err == nil && src.Helm != nil {
		_, err = r.Charts.Load(ctx, *src.Helm)
	}
	if err != nil {
		return artifactProblem(err, interval)
	}
	return holdfastv1.SourceAvailableReason, fmt.Sprintf("artifact %s (revision %s, %s) is available", t.Status.Artifact.URL,
		orNone(t.Status.Artifact.Revision), t.Status.Artifact.Digest), interval
}

// artifactProblem is the SourceAvailable reason and message of an artifact that could not be
// resolved or used.
func artifactProblem(err error, interval time.Duration) (string, string, time.Duration) {
	var re *templatesource.ReadError
	if errors.As(err, &re) {
		reason, msg, _ := missing(err)
		return reason, msg, interval
	}
	if render.Transient(err) {
		return holdfastv1.SourceUnavailableReason, err.Error(), interval
	}
	if reason := render.ReasonOf(err); reason != "" {
		return reason, err.Error(), interval
	}
	return holdfastv1.SourceUnavailableReason, err.Error(), interval
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
