package sandbox

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// SimulateFailureAnnotation, set to "true" on a pod (in a Deployment's pod template, say), makes
// kwok fail the pod instead of making it ready: its containers crash-loop (phase Failed with
// restartPolicy Never), so the workload never becomes available. See stages/simulate-failure.yaml.
const SimulateFailureAnnotation = "holdfast.dev/simulate-failure"

// The annotation and label kwok's documentation gives its fake nodes. kwok is told to manage
// only nodes with the annotation, so it leaves any other node alone.
const (
	kwokNodeAnnotation = "kwok.x-k8s.io/node"
	kwokNodeValue      = "fake"
	kwokNodeLabel      = "type"
	kwokNodeLabelValue = "kwok"
)

const (
	kwokKubeconfigFile = "kwok.kubeconfig"
	kwokDir            = "kwok"
	// kwokPodCIDR is where kwok takes pod IPs from; kwok's default, 10.0.0.0/24, is the
	// sandbox's service range.
	kwokPodCIDR      = "10.244.0.0/16"
	nodeLeaseSeconds = 40
)

// stageFiles are kwok's default node and pod stages and Holdfast's failure stage; kwok reads
// them as its configuration.
//
//go:embed stages/*.yaml
var stageFiles embed.FS

// NodeName is the name of the i-th simulated node (0-based) of a control plane.
func NodeName(i int) string { return "kwok-node-" + strconv.Itoa(i) }

func (c *ControlPlane) kwokArgs(configFiles []string) []string {
	args := []string{
		"--kubeconfig=" + filepath.Join(c.dir, kwokKubeconfigFile),
		"--manage-all-nodes=false",
		"--manage-nodes-with-annotation-selector=" + kwokNodeAnnotation + "=" + kwokNodeValue,
		"--cidr=" + kwokPodCIDR,
		// Without a Lease duration kwok renews no Leases, and the node-heartbeat-with-lease
		// stage updates node status every ten minutes: kube-controller-manager would find the
		// nodes silent and mark them NotReady. 40 s is the kubelet's default.
		"--node-lease-duration-seconds=" + strconv.Itoa(nodeLeaseSeconds),
	}
	for _, f := range configFiles {
		args = append(args, "--config="+f)
	}
	return args
}

// writeKwokConfig writes kwok's kubeconfig and stages into Dir and returns the stage files.
func (c *ControlPlane) writeKwokConfig() ([]string, error) {
	kubeconfig, err := kubeconfigFor(c.name, c.name, c.name+"-kwok", c.host, c.pki.ca.keyPair.Cert, c.pki.admin)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(c.dir, kwokKubeconfigFile), kubeconfig, 0o600); err != nil {
		return nil, fmt.Errorf("writing kwok kubeconfig: %w", err)
	}
	if err := os.MkdirAll(filepath.Join(c.dir, kwokDir), 0o700); err != nil {
		return nil, fmt.Errorf("creating kwok directory: %w", err)
	}
	entries, err := stageFiles.ReadDir("stages")
	if err != nil {
		return nil, fmt.Errorf("reading kwok stages: %w", err)
	}
	files := make([]string, 0, len(entries))
	for _, e := range entries {
		data, err := stageFiles.ReadFile("stages/" + e.Name())
		if err != nil {
			return nil, fmt.Errorf("reading kwok stage %s: %w", e.Name(), err)
		}
		path := filepath.Join(c.dir, kwokDir, e.Name())
		if err := os.WriteFile(path, data, 0o600); err != nil {
			return nil, fmt.Errorf("writing kwok stage %s: %w", e.Name(), err)
		}
		files = append(files, path)
	}
	return files, nil
}

// startKwok creates the simulated Nodes if they do not exist yet, runs kwok and waits until it
// manages every one: it has renewed the node's Lease and the node is Ready.
//
// The Leases are deleted first. A kwok process takes a new identity each start, and would
// otherwise wait up to the Lease duration (40 s) for the Leases of the kwok it replaces, after
// StopAPIServer and StartAPIServer, to expire before managing the nodes again.
func (c *ControlPlane) startKwok(ctx context.Context) error {
	configFiles, err := c.writeKwokConfig()
	if err != nil {
		return err
	}
	config := c.RESTConfig()
	// Two requests a node to set up, two a poll: client-go's default of 5/s would make a
	// hundred nodes take forty seconds.
	config.QPS, config.Burst = 100, 200
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		return fmt.Errorf("kwok readiness client: %w", err)
	}
	if err := c.ensureNodes(ctx, client); err != nil {
		return err
	}
	launched := time.Now()
	// A home of its own: kwok would also read ~/.kwok/kwok.yaml, whatever the user put there.
	p, err := c.launch("kwok", kwokBinary, c.kwokArgs(configFiles), "HOME="+filepath.Join(c.dir, kwokDir))
	if err != nil {
		return err
	}
	c.setProcess(&c.kwok, p)
	if err := waitReady(ctx, c.stopping, p, c.nodesManaged(client, launched)); err != nil {
		return errors.Join(err, p.stop())
	}
	return nil
}

// ensureNodes creates the Node objects kwok manages and deletes their Leases.
func (c *ControlPlane) ensureNodes(ctx context.Context, client kubernetes.Interface) error {
	for i := range c.nodes {
		name := NodeName(i)
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Annotations: map[string]string{kwokNodeAnnotation: kwokNodeValue},
			Labels: map[string]string{
				kwokNodeLabel:          kwokNodeLabelValue,
				corev1.LabelHostname:   name,
				corev1.LabelOSStable:   "linux",
				corev1.LabelArchStable: "amd64",
			},
		}}
		if _, err := client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating simulated node %s: %w", name, err)
		}
		err := client.CoordinationV1().Leases(corev1.NamespaceNodeLease).Delete(ctx, name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting the Lease of simulated node %s: %w", name, err)
		}
	}
	return nil
}

// nodesManaged is a readinessCheck: every simulated node is Ready and its Lease was renewed
// since kwok was launched, which only the running kwok can have done.
func (c *ControlPlane) nodesManaged(client kubernetes.Interface, launched time.Time) readinessCheck {
	return func(ctx context.Context) error {
		leases, err := client.CoordinationV1().Leases(corev1.NamespaceNodeLease).List(ctx, metav1.ListOptions{})
		if err != nil {
			return fmt.Errorf("listing node Leases: %w", err)
		}
		nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: kwokNodeLabel + "=" + kwokNodeLabelValue})
		if err != nil {
			return fmt.Errorf("listing nodes: %w", err)
		}
		for i := range c.nodes {
			name := NodeName(i)
			l := slices.IndexFunc(leases.Items, func(l coordinationv1.Lease) bool { return l.Name == name })
			if l < 0 || !renewedSince(&leases.Items[l], launched) {
				return fmt.Errorf("the Lease of node %s is not renewed by the running kwok yet", name)
			}
			n := slices.IndexFunc(nodes.Items, func(n corev1.Node) bool { return n.Name == name })
			if n < 0 || !nodeReady(&nodes.Items[n]) {
				return fmt.Errorf("node %s is not Ready yet", name)
			}
		}
		return nil
	}
}

func renewedSince(lease *coordinationv1.Lease, t time.Time) bool {
	return lease.Spec.HolderIdentity != nil && lease.Spec.RenewTime != nil && !lease.Spec.RenewTime.Time.Before(t)
}

func nodeReady(node *corev1.Node) bool {
	for _, cond := range node.Status.Conditions {
		if cond.Type == corev1.NodeReady {
			return cond.Status == corev1.ConditionTrue
		}
	}
	return false
}
