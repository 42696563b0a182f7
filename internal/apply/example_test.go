package apply_test

import (
	"context"
	"fmt"
	"log"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"holdfast.dev/holdfast/internal/apply"
)

// Deploy a set, persist its inventory, and on the next reconcile pass the inventory back: only
// what changed is written, and what is no longer declared is pruned.
func ExampleApplier_Apply() {
	ctx := context.Background()
	c, _, err := newClient(target.RESTConfig()) // a client for one target cluster
	if err != nil {
		log.Fatal(err)
	}
	a := apply.New(c)
	cm := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "example"},
		"data":     map[string]any{"greeting": "hello"},
	}}
	opts := apply.Options{
		DefaultNamespace: "default",
		Labels:           map[string]string{"holdfast.dev/managed-by": "holdfast", "holdfast.dev/owner": "example"},
		Prune:            true,
	}
	res, err := a.Apply(ctx, []*unstructured.Unstructured{cm}, opts)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Objects[0].Ref, res.Objects[0].Action)

	opts.Previous = res.Inventory // normally read back from a status object
	res, err = a.Apply(ctx, []*unstructured.Unstructured{cm}, opts)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Objects[0].Action, res.Changed)

	opts.Previous = res.Inventory
	res, err = a.Apply(ctx, nil, opts)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Objects[0].Action)
	// Output:
	// v1 ConfigMap default/example Created
	// Unchanged 0
	// Deleted
}
