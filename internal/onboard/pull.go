package onboard

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/agentaccess"
	"holdfast.dev/holdfast/internal/install"
	"holdfast.dev/holdfast/internal/tenancy"
)

// A Pull cluster is registered from the hub alone: the hub never reaches it. RegisterPull makes
// the Cluster (in a namespace of its own), waits for the Cluster controller to give its agent an
// identity (package agentaccess), and requests the bootstrap token, bound to a Secret the agent
// deletes once it has a token of its own; AgentManifests is what to apply on the cluster.

// Defaults of PullOptions and AgentOptions, and the names the agent chart
// (charts/holdfast-agent) gives the agent's objects on its cluster; its tests check they agree.
const (
	DefaultBootstrapDuration = time.Hour
	// DefaultAgentClusterRole is the chart's default rbac.clusterRole.
	DefaultAgentClusterRole = "cluster-admin"
	// AgentName names the agent's objects on its cluster: ServiceAccount, ClusterRoleBinding,
	// Deployment, and the Secret holding its hub kubeconfig (AgentHubSecret); and the release
	// AgentManifests renders.
	AgentName = "holdfast-agent"
	// AgentHubSecret holds, under AgentHubKey, the kubeconfig the agent reaches the hub with;
	// the agent keeps its own token there once it traded the bootstrap token.
	AgentHubSecret = "holdfast-agent-hub"
	AgentHubKey    = "kubeconfig"
)

// PullOptions say how to register a Pull cluster.
type PullOptions struct {
	// Name of the Cluster; Namespace defaults to tenancy.PullNamespacePrefix + Name.
	Name, Namespace string
	Labels          map[string]string
	// HubServer is the hub API server's address as the cluster reaches it; the address of the
	// hub config when empty.
	HubServer string
	// BootstrapDuration is the validity asked for the bootstrap token (the API server may
	// shorten it); DefaultBootstrapDuration when zero.
	BootstrapDuration time.Duration
	// Wait bounds the wait for the Cluster controller to create the agent's ServiceAccount.
	Wait time.Duration
	// Controller is the Holdfast controller's ServiceAccount on the hub, let publish the
	// cluster's work in its namespace (agentaccess.PublisherObjects); DefaultController when
	// empty.
	Controller types.NamespacedName
}

// DefaultController is the controller's ServiceAccount as the chart installs it by default.
var DefaultController = types.NamespacedName{Namespace: Namespace, Name: "holdfast"}

// PullNamespace is the namespace of a Pull cluster named name, unless one is given.
func PullNamespace(name string) string { return tenancy.PullNamespacePrefix + name }

// RegisterPull registers a Pull cluster on the hub (c, cs and cfg reach it with the caller's
// rights) and returns the kubeconfig its agent bootstraps with. Running it again for the same
// cluster changes its labels and issues a new bootstrap token, ending the one before.
func RegisterPull(ctx context.Context, c client.Client, cs kubernetes.Interface, cfg *rest.Config, o PullOptions) ([]byte, error) {
	if o.Namespace == "" {
		o.Namespace = PullNamespace(o.Name)
	}
	if o.BootstrapDuration <= 0 {
		o.BootstrapDuration = DefaultBootstrapDuration
	}
	if o.Wait <= 0 {
		o.Wait = time.Minute
	}
	ca, err := caData(cfg)
	if err != nil {
		return nil, err
	}
	if err := client.IgnoreAlreadyExists(c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: o.Namespace}})); err != nil {
		return nil, fmt.Errorf("creating namespace %s on the hub: %w", o.Namespace, err)
	}
	if o.Controller.Name == "" {
		o.Controller = DefaultController
	}
	role, binding := agentaccess.PublisherObjects(o.Namespace, o.Controller)
	for _, obj := range []client.Object{role, binding} {
		if err := apply(ctx, cs, obj); err != nil {
			return nil, err
		}
	}
	if err := registerPullCluster(ctx, c, o); err != nil {
		return nil, err
	}
	sa := &corev1.ServiceAccount{}
	key := client.ObjectKey{Namespace: o.Namespace, Name: agentaccess.ServiceAccountName}
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, o.Wait, true, func(ctx context.Context) (bool, error) {
		err := c.Get(ctx, key, sa)
		return err == nil, client.IgnoreNotFound(err)
	}); err != nil {
		return nil, fmt.Errorf("waiting for the Holdfast controller to create the agent's ServiceAccount %s (is the controller running, and is the Cluster Ready=False with a reason other than NamespaceShared?): %w", key, err)
	}
	secret, err := newBootstrapSecret(ctx, c, o.Namespace)
	if err != nil {
		return nil, err
	}
	seconds := int64(o.BootstrapDuration.Seconds())
	tr, err := cs.CoreV1().ServiceAccounts(o.Namespace).CreateToken(ctx, agentaccess.ServiceAccountName, &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		ExpirationSeconds: &seconds,
		BoundObjectRef:    &authenticationv1.BoundObjectReference{Kind: "Secret", APIVersion: "v1", Name: secret.Name, UID: secret.UID},
	}}, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("requesting the bootstrap token of %s: %w", key, err)
	}
	server := o.HubServer
	if server == "" {
		server = cfg.Host
	}
	return kubeconfig(server, ca, cfg.TLSClientConfig.ServerName, agentaccess.ServiceAccountName, tr.Status.Token, o.Namespace)
}

// registerPullCluster creates the Cluster in Pull mode, or updates its labels; a Push Cluster of
// that name is left alone, with an error.
func registerPullCluster(ctx context.Context, c client.Client, o PullOptions) error {
	cluster := &holdfastv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: o.Namespace, Name: o.Name, Labels: o.Labels},
		Spec: holdfastv1.ClusterSpec{Mode: holdfastv1.ClusterModePull}}
	err := c.Create(ctx, cluster)
	if !apierrors.IsAlreadyExists(err) {
		if err != nil {
			return fmt.Errorf("creating Cluster %s/%s: %w", o.Namespace, o.Name, err)
		}
		return nil
	}
	live := &holdfastv1.Cluster{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(cluster), live); err != nil {
		return fmt.Errorf("reading Cluster %s/%s: %w", o.Namespace, o.Name, err)
	}
	if !live.Pull() {
		return fmt.Errorf("cluster %s/%s exists in %s mode: remove it first, or register this one under another name", o.Namespace, o.Name, live.Spec.Mode)
	}
	before := live.DeepCopy()
	live.Labels = o.Labels
	if err := c.Patch(ctx, live, client.MergeFrom(before)); err != nil {
		return fmt.Errorf("updating the labels of Cluster %s/%s: %w", o.Namespace, o.Name, err)
	}
	return nil
}

// newBootstrapSecret creates the Secret the bootstrap token is bound to, deleting the one before
// (and so ending the bootstrap token bound to it).
func newBootstrapSecret(ctx context.Context, c client.Client, namespace string) (*corev1.Secret, error) {
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: agentaccess.BootstrapSecretName}}
	if err := client.IgnoreNotFound(c.Delete(ctx, secret)); err != nil {
		return nil, fmt.Errorf("deleting the previous bootstrap Secret %s/%s: %w", namespace, secret.Name, err)
	}
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		err := c.Create(ctx, secret)
		if apierrors.IsAlreadyExists(err) {
			return false, nil // the previous one is still going away
		}
		return err == nil, err
	})
	if err != nil {
		return nil, fmt.Errorf("creating the bootstrap Secret %s/%s: %w", namespace, secret.Name, err)
	}
	return secret, nil
}

// AgentOptions say how the agent runs on its cluster.
type AgentOptions struct {
	// Cluster is the agent's Cluster on the hub.
	Cluster client.ObjectKey
	// Image is the agent's container image (the Holdfast image), a reference with a tag or a
	// digest; the image Values name (by default the chart's) when empty.
	Image string
	// ClusterRole is what the agent may do on its cluster; the rbac.clusterRole Values name (by
	// default the chart's, DefaultAgentClusterRole) when empty.
	ClusterRole string
	// Values are values of the agent chart (charts/holdfast-agent), as `helm install -f/--set`
	// give them: rbac.clusterRole "" with rbac.rules for the narrower ClusterRole, resources,
	// nodeSelector... The fields above, the cluster and the hub kubeconfig are set over them.
	Values map[string]any
}

// AgentManifests are the objects to apply on a Pull cluster, as YAML for `kubectl apply -f -`:
// the agent chart (charts/holdfast-agent) rendered as `helm template` does in the namespace
// holdfast-system, with that namespace, the agent's ServiceAccount bound to its ClusterRole,
// the Secret holding hubKubeconfig (none when it is empty and o.Values name hub.existingSecret),
// and the agent's Deployment. The chart alone decides what they are, whether `holdfast cluster
// add --pull` prints them or Helm installs them.
func AgentManifests(ctx context.Context, hubKubeconfig []byte, o AgentOptions) ([]byte, error) {
	ch, err := install.AgentChart()
	if err != nil {
		return nil, err
	}
	values, err := agentValues(hubKubeconfig, o)
	if err != nil {
		return nil, err
	}
	manifests, err := install.ManifestsOf(ctx, ch, install.Options{ReleaseName: AgentName, Namespace: Namespace, Values: values})
	if err != nil {
		return nil, fmt.Errorf("rendering the agent's manifests: %w", err)
	}
	return []byte(manifests), nil
}

// agentValues are o.Values with the options, the cluster and the hub kubeconfig set over them;
// o.Values is left as it was.
func agentValues(hubKubeconfig []byte, o AgentOptions) (map[string]any, error) {
	v := withValue(o.Values, o.Cluster.String(), "cluster")
	if len(hubKubeconfig) > 0 {
		v = withValue(v, string(hubKubeconfig), "hub", "kubeconfig")
	}
	if o.Image != "" {
		repository, tag, digest, err := splitImage(o.Image)
		if err != nil {
			return nil, err
		}
		v = withValue(v, repository, "image", "repository")
		v = withValue(v, tag, "image", "tag")
		v = withValue(v, digest, "image", "digest")
	}
	if o.ClusterRole != "" {
		v = withValue(v, o.ClusterRole, "rbac", "clusterRole")
	}
	return v, nil
}

// withValue returns values with value at path, copying the maps along it rather than changing
// them.
func withValue(values map[string]any, value any, path ...string) map[string]any {
	out := maps.Clone(values)
	if out == nil {
		out = map[string]any{}
	}
	if len(path) == 1 {
		out[path[0]] = value
		return out
	}
	sub, _ := out[path[0]].(map[string]any)
	out[path[0]] = withValue(sub, value, path[1:]...)
	return out
}

// splitImage splits an image reference into the chart's image values: repository and tag, or
// repository and digest (which then keeps any tag before it, as the reference had it). No tag
// is latest, as for the container runtime.
func splitImage(ref string) (repository, tag, digest string, err error) {
	invalid := fmt.Errorf("agent image %q: want repository:tag or repository@sha256:digest", ref)
	if strings.ContainsAny(ref, " \t\n") {
		return "", "", "", invalid
	}
	if repo, d, ok := strings.Cut(ref, "@"); ok {
		if repo == "" || d == "" {
			return "", "", "", invalid
		}
		return repo, "", d, nil
	}
	repository, tag = ref, "latest"
	// A colon after the last slash starts the tag; one before it is a registry's port.
	if i := strings.LastIndex(ref, ":"); i > strings.LastIndex(ref, "/") {
		repository, tag = ref[:i], ref[i+1:]
	}
	if repository == "" || tag == "" {
		return "", "", "", invalid
	}
	return repository, tag, "", nil
}

// RevokePull ends the hub access of a Pull cluster's agent: its ServiceAccount is deleted, which
// ends every token issued for it at once, and its bootstrap Secret. The Cluster controller gives
// the Cluster a new ServiceAccount, for which `holdfast cluster add --pull` issues a new
// bootstrap token.
func RevokePull(ctx context.Context, c client.Client, key client.ObjectKey) error {
	cluster := &holdfastv1.Cluster{}
	if err := c.Get(ctx, key, cluster); err != nil {
		return fmt.Errorf("reading Cluster %s: %w", key, err)
	}
	if !cluster.Pull() {
		return fmt.Errorf("cluster %s is in %s mode: it has no agent (remove it, or rotate its kubeconfig with holdfast cluster add)", key, cluster.Spec.Mode)
	}
	sa, _, _ := agentaccess.Objects(cluster)
	bootstrap := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: agentaccess.BootstrapSecretName}}
	for _, o := range []client.Object{sa, bootstrap} {
		if err := client.IgnoreNotFound(c.Delete(ctx, o)); err != nil {
			return fmt.Errorf("revoking the agent of Cluster %s: %w", key, err)
		}
	}
	return nil
}
