package templatesource

import (
	"k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

// Changed passes the ServiceTemplate events that change what rendering it reads: every event
// but an update, and an update of the spec (a new generation) or of status.artifact (the
// template controller pinned a new revision of its artifact). Its other status changes
// (conditions) change nothing that is rendered.
func Changed() predicate.Predicate {
	return predicate.Or(predicate.GenerationChangedPredicate{}, predicate.Funcs{
		CreateFunc:  func(event.CreateEvent) bool { return false },
		DeleteFunc:  func(event.DeleteEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
		UpdateFunc: func(e event.UpdateEvent) bool {
			before, ok1 := e.ObjectOld.(*holdfastv1.ServiceTemplate)
			after, ok2 := e.ObjectNew.(*holdfastv1.ServiceTemplate)
			return ok1 && ok2 && !equality.Semantic.DeepEqual(before.Status.Artifact, after.Status.Artifact)
		},
	})
}
