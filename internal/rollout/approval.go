package rollout

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

// Approval is an approval a service set carries.
type Approval struct {
	// Value is the annotation's value: the revision approved, then a token that makes each
	// approval new ("<revision> <time>").
	Value string
	// By is who approved it (RolloutApprovedByAnnotation); Verified whether the hub's admission
	// policy stamped it.
	By       string
	Verified bool
}

// approve records the service set's approval of the held revision, if it carries one not
// handled before, and starts the rollout at the first wave; it reports whether it did. An
// approval of another revision is handled (it never comes back) and approves nothing.
func approve(st *holdfastv1.RolloutStatus, in Input) bool {
	a := in.Approval
	if a == nil || a.Value == "" || a.Value == st.LastHandledApprove {
		return false
	}
	st.LastHandledApprove = a.Value
	if holdfastv1.RevisionOf(a.Value) != st.Revision {
		return false
	}
	now := metav1.NewTime(in.Now)
	st.Approval = &holdfastv1.RolloutApproval{Revision: st.Revision, By: a.By, Verified: a.Verified, Time: now}
	if p := st.Preview; p != nil && p.Revision == st.Revision {
		st.Approval.PreviewDigest, st.Approval.PreviewComplete = p.Digest, p.Previewed == p.Clusters
	}
	st.Phase, st.Wave, st.StartTime = holdfastv1.RolloutProgressing, 0, &now
	return true
}

// hold keeps a revision waiting for approval: every cluster keeps the revision it has (one that
// has none gets the stable revision, or is held if only the held revision's selector selects
// it) and previews the held one (PreviewRequest, which the status objects read from the service
// set's status). The phase is Previewed once every cluster recorded its preview for this hold,
// as the summary counts them.
func hold(st holdfastv1.RolloutStatus, in Input, waves []Wave) (holdfastv1.RolloutStatus, map[string]string) {
	assign := make(map[string]string, len(in.Clusters))
	for _, c := range in.Clusters {
		switch {
		case c.Status != nil && c.Status.Spec.Revision != "":
			assign[c.Key] = c.Status.Spec.Revision
		case c.Membership == Joining:
			assign[c.Key] = ""
		default:
			assign[c.Key] = st.StableRevision
		}
	}
	st.Phase = holdfastv1.RolloutPreviewing
	st.Preview = Summarize(holdfastv1.PreviewRequest(&st), in.Clusters)
	if st.Preview.Previewed == st.Preview.Clusters {
		st.Phase = holdfastv1.RolloutPreviewed
	}
	st.FailedClusters, st.Failures, st.WaveHealthyTime, st.CompletionTime = nil, 0, nil, nil
	st.Waves = waveStatuses(waves, in.Clusters, assign, make([]state, len(in.Clusters)), st.Revision)
	return st, assign
}

// Previewed reports whether css recorded its preview for request (PreviewRequest).
func Previewed(css *holdfastv1.ClusterServiceStatus, request string) bool {
	return css != nil && request != "" && css.Status.Preview != nil && css.Status.Preview.Request == request
}
