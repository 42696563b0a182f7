package main

import (
	"context"
	"fmt"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

// floodNamespace holds the flood's objects on the first target.
const floodNamespace = "bench-flood"

// flood creates n ConfigMaps in floodNamespace labelled as Holdfast's
// (holdfast.dev/managed-by=holdfast, the first service set named as owner) with a holdfast.dev/
// annotation of padding bytes: what anyone who may create objects on a target can do (issue 27,
// finding 2). Holdfast applied none of them.
func flood(ctx context.Context, c client.Client, n, padding int, owner string) error {
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: floodNamespace}}); err != nil {
		return fmt.Errorf("creating namespace %s: %w", floodNamespace, err)
	}
	pad := strings.Repeat("p", padding)
	next := make(chan int)
	errs := make(chan error, 16)
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for i := range next {
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("flood-%05d", i), Namespace: floodNamespace,
					Labels: map[string]string{holdfastv1.ManagedByLabel: holdfastv1.ManagedByValue, holdfastv1.ServiceLabel: "bulk"},
					// Each value its own: equal ones would share one interned copy.
					Annotations: map[string]string{holdfastv1.OwnerAnnotation: owner, "holdfast.dev/padding": fmt.Sprint(i) + pad[len(fmt.Sprint(i)):]}}}
				if err := c.Create(ctx, cm); err != nil {
					select {
					case errs <- fmt.Errorf("creating ConfigMap %s: %w", cm.Name, err):
					default:
					}
				}
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	close(errs)
	return <-errs
}
