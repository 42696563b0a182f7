package drift

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

// DetailOf is the drift record of a verdict, as status keeps it: the type, who made the change
// (not known for a deletion), at most MaxDriftFields fields, when and how it was detected.
func DetailOf(v Verdict, detected time.Time, by holdfastv1.DriftDetection) holdfastv1.DriftDetail {
	d := holdfastv1.DriftDetail{Type: holdfastv1.DriftChanged, DetectedTime: metav1.NewMicroTime(detected), Detection: by}
	if v.Deleted {
		d.Type = holdfastv1.DriftDeleted
		return d
	}
	d.Manager, d.Operation, d.Subresource = v.Author.Manager, v.Author.Operation, v.Author.Subresource
	for i, f := range v.Fields {
		if i == holdfastv1.MaxDriftFields {
			break
		}
		d.Fields = append(d.Fields, holdfastv1.FieldChange{Path: f.Path, Old: f.Old, New: f.New})
	}
	return d
}
