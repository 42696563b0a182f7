package sandbox_test

import (
	"context"
	"fmt"
	"log"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"holdfast.dev/holdfast/internal/sandbox"
)

// A hub with kube-controller-manager and a bare member cluster, started side by side.
func Example() {
	ctx := context.Background()
	clusters, err := sandbox.StartMany(ctx, []sandbox.Options{
		{Name: "hub", ControllerManager: true},
		{Name: "member-1"},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer func() {
		for _, c := range clusters {
			_ = c.Stop()
		}
	}()
	hub, member := clusters[0], clusters[1]

	client, err := kubernetes.NewForConfig(member.RESTConfig())
	if err != nil {
		log.Fatal(err)
	}
	namespaces, err := client.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(namespaces.Items) > 0)
	// kubectl --kubeconfig <path> works as well.
	fmt.Println(hub.KubeconfigPath())
}
