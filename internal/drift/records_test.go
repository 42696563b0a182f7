package drift

import (
	"testing"
	"time"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

func TestDetailOfBoundsFieldsAndHidesDeletionAuthors(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	v := Verdict{Drifted: true, Author: Author{Manager: "kubectl", Operation: "Update"}}
	for range holdfastv1.MaxDriftFields + 5 {
		v.Fields = append(v.Fields, FieldChange{Path: ".data.x", Old: `"a"`, New: `"b"`})
	}
	d := DetailOf(v, now, holdfastv1.DriftDetectedByWatch)
	if d.Type != holdfastv1.DriftChanged || len(d.Fields) != holdfastv1.MaxDriftFields || d.Manager != "kubectl" ||
		d.Detection != holdfastv1.DriftDetectedByWatch || !d.DetectedTime.Time.Equal(now) {
		t.Fatalf("DetailOf(changed) = %+v", d)
	}
	d = DetailOf(Verdict{Drifted: true, Deleted: true, Author: Author{Manager: "someone"}}, now, holdfastv1.DriftDetectedByComparison)
	if d.Type != holdfastv1.DriftDeleted || d.Manager != "" || len(d.Fields) != 0 {
		t.Fatalf("DetailOf(deleted) = %+v", d)
	}
}
