package notify

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

// Targets reads the notification targets of a service set (spec.notifications) from their
// Secrets, through reader (the API server: Secrets are never cached). allowed says whether the
// set may read a Secret in a namespace (the tenancy policy). A target that cannot be used is
// skipped and returned in invalid, its error naming the Secret and key, never a value.
// Target names are made unique across service sets ("<set>/<target>"): queues are per name.
func Targets(ctx context.Context, reader client.Reader, mcs *holdfastv1.MultiClusterService,
	allowed func(target, namespace string) error) (targets []Target, invalid []InvalidTarget) {
	for _, spec := range mcs.Spec.Notifications {
		sec := &corev1.Secret{}
		key := client.ObjectKey{Namespace: spec.SecretRef.Namespace, Name: spec.SecretRef.Name}
		err := allowed(spec.Name, key.Namespace)
		if err == nil {
			err = reader.Get(ctx, key, sec)
		}
		var t Target
		if err == nil {
			t, err = TargetFromSecret(spec, sec)
		} else {
			err = fmt.Errorf("reading Secret %s of notification target %q: %w", key, spec.Name, err)
		}
		if err != nil {
			invalid = append(invalid, InvalidTarget{Name: spec.Name, Err: err})
			continue
		}
		t.Name = mcs.Name + "/" + t.Name
		targets = append(targets, t)
	}
	return targets, invalid
}

// InvalidTarget is a notification target that cannot be used, and why.
type InvalidTarget struct {
	Name string
	Err  error
}
