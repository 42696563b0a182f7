package onboard

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/agentaccess"
	"holdfast.dev/holdfast/internal/tenancy"
)

// A Pull cluster is registered from the hub alone: the hub never reaches it. RegisterPull makes
// the Cluster (in a namespace of its own), waits for the Cluster controller to give its agent an
// identity (package agentaccess), and requests the bootstrap token, bound to a Secret the agent
// deletes once it has a token of its own; AgentManifests is what to apply on the cluster.

// Defaults of PullOptions.
const (
	DefaultBootstrapDuration = time.Hour
	DefaultAgentClusterRole  = "cluster-admin"
	// AgentName names the agent's objects on its cluster: ServiceAccount, ClusterRoleBinding,
	// Deployment, and the Secret holding its hub kubeconfig (AgentHubSecret).
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
	// Image is the agent's container image (the Holdfast image).
	Image string
	// ClusterRole is what the agent may do on its cluster: DefaultAgentClusterRole when empty.
	ClusterRole string
}

// AgentManifests are the objects to apply on a Pull cluster, as YAML: the namespace
// holdfast-system, the agent's ServiceAccount bound to its ClusterRole, the Secret holding
// hubKubeconfig, and the agent's Deployment.
func AgentManifests(hubKubeconfig []byte, o AgentOptions) ([]byte, error) {
	if o.ClusterRole == "" {
		o.ClusterRole = DefaultAgentClusterRole
	}
	labels := map[string]string{"app.kubernetes.io/name": AgentName, "app.kubernetes.io/part-of": "holdfast"}
	meta := metav1.ObjectMeta{Namespace: Namespace, Name: AgentName, Labels: labels}
	objs := []any{
		&corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}, ObjectMeta: metav1.ObjectMeta{Name: Namespace}},
		&corev1.ServiceAccount{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"}, ObjectMeta: meta},
		&rbacv1.ClusterRoleBinding{TypeMeta: metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "ClusterRoleBinding"},
			ObjectMeta: metav1.ObjectMeta{Name: AgentName, Labels: labels},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: o.ClusterRole},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: Namespace, Name: AgentName}}},
		&corev1.Secret{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
			ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: AgentHubSecret, Labels: labels},
			Data:       map[string][]byte{AgentHubKey: hubKubeconfig}},
		agentDeployment(meta, o),
	}
	var out []byte
	for _, obj := range objs {
		data, err := yaml.Marshal(obj)
		if err != nil {
			return nil, fmt.Errorf("writing the agent's manifests: %w", err)
		}
		out = append(append(out, "---\n"...), data...)
	}
	return out, nil
}

// agentDeployment runs `holdfast agent`, which reads its hub kubeconfig from the Secret (and
// keeps its own token there).
func agentDeployment(meta metav1.ObjectMeta, o AgentOptions) *appsv1.Deployment {
	return &appsv1.Deployment{TypeMeta: metav1.TypeMeta{APIVersion: appsv1.SchemeGroupVersion.String(), Kind: "Deployment"}, ObjectMeta: meta,
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: meta.Labels},
			// One agent at a time: two would both correct and both write the status.
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: meta.Labels}, Spec: corev1.PodSpec{
				ServiceAccountName: AgentName,
				SecurityContext:    &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
				Containers: []corev1.Container{{
					Name: "agent", Image: o.Image,
					Args: []string{"agent", "--hub-kubeconfig-secret=" + Namespace + "/" + AgentHubSecret, "--cluster=" + o.Cluster.String()},
					SecurityContext: &corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(false), ReadOnlyRootFilesystem: ptr.To(true),
						Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}},
				}},
			}},
		}}
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
