package drift

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

// DetailOf is the drift record of a verdict, as status keeps it: the type, who made the change
// (not known for a deletion), at most MaxDriftFields fields, when and how it was detected.
func DetailOf(v Verdict, detected time.Time, by holdfastv1.DriftDetection) holdfastv1.DriftDetail {
	d := holdfastv1.DriftDetail{Type: holdfastv1.DriftChanged, DetectedTime: metav1.NewMicroTime(detected), Detection: by,
		ResourceVersion: v.ResourceVersion}
	if v.Deleted {
		d.Type = holdfastv1.DriftDeleted
		return d
	}
	d.Manager, d.Operation, d.Subresource, d.User = v.Author.Manager, v.Author.Operation, v.Author.Subresource, v.Author.User
	for i, f := range v.Fields {
		if i == holdfastv1.MaxDriftFields {
			break
		}
		d.Fields = append(d.Fields, holdfastv1.FieldChange{Path: f.Path, Old: f.Old, New: f.New})
	}
	return d
}

// Unresolved reports whether an object in state s differs from its declaration and waits for
// something (a manual request, a correction window, the cause of a refused correction to go):
// Drifted, Missing, Contested and Uncorrectable objects. Status counts them as drifted.
func Unresolved(s holdfastv1.ResourceState) bool {
	switch s {
	case holdfastv1.ResourceDrifted, holdfastv1.ResourceMissing, holdfastv1.ResourceContested, holdfastv1.ResourceUncorrectable:
		return true
	}
	return false
}

// Retry bounds the wait before a refused correction is tried again.
const (
	minRetry = 5 * time.Second
	maxRetry = 5 * time.Minute
)

// RetryAfter is how long to wait before trying again to correct a drift detected at detected
// whose correction was refused: as long as it has been open (so the waits double), at least
// 5s and at most 5m. It needs no count of attempts, so it survives a restart.
func RetryAfter(detected, now time.Time) time.Duration {
	return min(max(now.Sub(detected), minRetry), maxRetry)
}
