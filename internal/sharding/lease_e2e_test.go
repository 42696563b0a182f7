package sharding_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"holdfast.dev/holdfast/internal/sharding"
)

// runCoordinator runs a coordinator of identity over the given clusters until the test ends.
func runCoordinator(t *testing.T, hub client.Client, ns, identity string, clusters []types.NamespacedName) *sharding.Coordinator {
	t.Helper()
	c, err := sharding.New(sharding.Options{
		Identity: identity, Namespace: ns, Group: "lease-test", Reader: hub, Writer: hub,
		LeaseDuration: 2 * time.Second,
		Clusters:      func(context.Context) ([]types.NamespacedName, error) { return clusters, nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = c.Start(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return c
}

func owned(c *sharding.Coordinator, clusters []types.NamespacedName) int {
	n := 0
	for _, k := range clusters {
		if c.Owns(k) {
			n++
		}
	}
	return n
}

// TestLeases: two processes started with one identity do not both act (the second refuses the
// Lease the first renews), and the Lease of a replica gone for good is deleted.
func TestLeases(t *testing.T) {
	hub := hubFleet(t).HubClient()
	g := NewWithT(t)
	ctx := context.Background()
	ns := "lease-test"
	g.Expect(hub.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
	clusters := []types.NamespacedName{{Namespace: "fleet", Name: "a"}, {Namespace: "fleet", Name: "b"}, {Namespace: "fleet", Name: "c"}}

	// A member gone for good: its Lease never changes again.
	gone := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: sharding.LeaseName("gone"), Labels: map[string]string{sharding.MemberLabel: "lease-test"},
			Annotations: map[string]string{sharding.ViewAnnotation: "gone"}},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("gone"), LeaseDurationSeconds: ptr.To(int32(2)), RenewTime: ptr.To(metav1.NewMicroTime(time.Now()))},
	}
	g.Expect(hub.Create(ctx, gone)).To(Succeed())

	first := runCoordinator(t, hub, ns, "same", clusters)
	g.Eventually(func() int { return owned(first, clusters) }).WithTimeout(20*time.Second).WithPolling(100*time.Millisecond).
		Should(Equal(len(clusters)), "the only live member holds every cluster once the gone member's Lease expired")

	second := runCoordinator(t, hub, ns, "same", clusters)
	g.Consistently(func() int { return owned(second, clusters) }).WithTimeout(3*time.Second).WithPolling(100*time.Millisecond).
		Should(BeZero(), "a second process with the same identity acts")
	g.Expect(owned(first, clusters)).To(Equal(len(clusters)))

	g.Eventually(func() bool {
		return apierrors.IsNotFound(hub.Get(ctx, client.ObjectKeyFromObject(gone), &coordinationv1.Lease{}))
	}).WithTimeout(20*time.Second).WithPolling(200*time.Millisecond).Should(BeTrue(), "the Lease of a member gone for good is still there")
}
