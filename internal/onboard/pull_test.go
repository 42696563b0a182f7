package onboard_test

import (
	"encoding/base64"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"holdfast.dev/holdfast/internal/install"
	"holdfast.dev/holdfast/internal/onboard"
)

// hubKubeconfig stands for the kubeconfig RegisterPull issues, bootstrap token included.
const hubKubeconfig = `apiVersion: v1
kind: Config
clusters:
- name: hub
  cluster: {server: "https://hub.example:6443", certificate-authority-data: Q0E=}
users:
- name: holdfast-agent
  user: {token: bootstrap-token-1d2c3b4a}
contexts:
- name: hub
  context: {cluster: hub, user: holdfast-agent, namespace: holdfast-pull-edge-1}
current-context: hub
`

var edge1 = client.ObjectKey{Namespace: "holdfast-pull-edge-1", Name: "edge-1"}

// agentObjects renders the agent's manifests as `holdfast cluster add --pull` prints them and
// indexes them by kind/name.
func agentObjects(t *testing.T, kubeconfig string, o onboard.AgentOptions) (string, map[string]*unstructured.Unstructured) {
	t.Helper()
	manifests, err := onboard.AgentManifests(t.Context(), []byte(kubeconfig), o)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := install.Objects(string(manifests))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*unstructured.Unstructured{}
	for _, obj := range objs {
		out[obj.GetKind()+"/"+obj.GetName()] = obj
	}
	return string(manifests), out
}

func as[T any](t *testing.T, objs map[string]*unstructured.Unstructured, key string) *T {
	t.Helper()
	u, ok := objs[key]
	if !ok {
		t.Fatalf("no %s rendered; got %v", key, slices.Sorted(maps.Keys(objs)))
	}
	out := new(T)
	if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(u.Object, out, true); err != nil {
		t.Fatalf("%s does not convert to %T: %v", key, out, err)
	}
	return out
}

// TestAgentManifests: what `holdfast cluster add --pull` prints by default are the objects it
// always printed, under the names the agent and the rest of Holdfast know (the constants), now
// rendered from the agent chart: the namespace, the ServiceAccount bound to cluster-admin, the
// Secret with the hub kubeconfig (the only place it is), and the Deployment.
func TestAgentManifests(t *testing.T) {
	manifests, objs := agentObjects(t, hubKubeconfig, onboard.AgentOptions{Cluster: edge1, Image: "ghcr.io/holdfast-dev/holdfast:v0.4.0"})
	want := []string{"Namespace/" + onboard.Namespace, "ServiceAccount/" + onboard.AgentName, "ClusterRoleBinding/" + onboard.AgentName,
		"Secret/" + onboard.AgentHubSecret, "Deployment/" + onboard.AgentName}
	got := slices.Sorted(maps.Keys(objs))
	if slices.Sort(want); !slices.Equal(got, want) {
		t.Errorf("objects %v, want %v", got, want)
	}
	// The Namespace comes first: `kubectl apply -f -` and a plain create in order both work.
	if first, err := install.Objects(manifests); err != nil || first[0].GetKind() != "Namespace" {
		t.Errorf("the first object is not the Namespace (%v)", err)
	}
	for key, o := range objs {
		if key != "Namespace/"+onboard.Namespace && key != "ClusterRoleBinding/"+onboard.AgentName && o.GetNamespace() != onboard.Namespace {
			t.Errorf("%s is in namespace %q, want %s", key, o.GetNamespace(), onboard.Namespace)
		}
		if l := o.GetLabels(); l["app.kubernetes.io/name"] != onboard.AgentName || l["app.kubernetes.io/part-of"] != "holdfast" {
			t.Errorf("%s lacks the agent's labels: %v", key, l)
		}
	}

	secret := as[corev1.Secret](t, objs, "Secret/"+onboard.AgentHubSecret)
	if string(secret.Data[onboard.AgentHubKey]) != hubKubeconfig {
		t.Errorf("Secret %s holds %q under %s, want the hub kubeconfig", secret.Name, secret.Data[onboard.AgentHubKey], onboard.AgentHubKey)
	}
	// The credential is in the Secret and nowhere else (no annotation, no argument).
	if strings.Contains(manifests, "bootstrap-token-1d2c3b4a") || strings.Count(manifests, base64.StdEncoding.EncodeToString([]byte(hubKubeconfig))) != 1 {
		t.Errorf("the hub kubeconfig appears outside its Secret:\n%s", manifests)
	}

	crb := as[rbacv1.ClusterRoleBinding](t, objs, "ClusterRoleBinding/"+onboard.AgentName)
	wantSubjects := []rbacv1.Subject{{Kind: "ServiceAccount", Name: onboard.AgentName, Namespace: onboard.Namespace}}
	if crb.RoleRef.Kind != "ClusterRole" || crb.RoleRef.Name != onboard.DefaultAgentClusterRole || !reflect.DeepEqual(crb.Subjects, wantSubjects) {
		t.Errorf("ClusterRoleBinding binds %+v to %+v, want the agent's ServiceAccount to %s", crb.Subjects, crb.RoleRef, onboard.DefaultAgentClusterRole)
	}

	d := as[appsv1.Deployment](t, objs, "Deployment/"+onboard.AgentName)
	// The selector is the one earlier releases gave: a Deployment's selector cannot change.
	wantSelector := map[string]string{"app.kubernetes.io/name": onboard.AgentName, "app.kubernetes.io/part-of": "holdfast"}
	if *d.Spec.Replicas != 1 || d.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType || !reflect.DeepEqual(d.Spec.Selector.MatchLabels, wantSelector) {
		t.Errorf("Deployment: %d replicas, strategy %s, selector %v; want one, Recreate, %v", *d.Spec.Replicas, d.Spec.Strategy.Type, d.Spec.Selector.MatchLabels, wantSelector)
	}
	pod := d.Spec.Template.Spec
	if pod.ServiceAccountName != onboard.AgentName || len(pod.Containers) != 1 {
		t.Fatalf("pod: service account %q, %d containers", pod.ServiceAccountName, len(pod.Containers))
	}
	c := pod.Containers[0]
	wantArgs := []string{"agent", "--hub-kubeconfig-secret=" + onboard.Namespace + "/" + onboard.AgentHubSecret, "--cluster=" + edge1.String()}
	if c.Image != "ghcr.io/holdfast-dev/holdfast:v0.4.0" || !slices.Equal(c.Args, wantArgs) {
		t.Errorf("container: image %s, args %q; want the given image and %q", c.Image, c.Args, wantArgs)
	}
	psc, sc := pod.SecurityContext, c.SecurityContext
	if psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot || psc.SeccompProfile == nil || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("pod security context %+v, want runAsNonRoot and the RuntimeDefault seccomp profile", psc)
	}
	if sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem ||
		sc.Capabilities == nil || !reflect.DeepEqual(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) {
		t.Errorf("container security context %+v, want no privilege escalation, a read-only root filesystem, all capabilities dropped", sc)
	}

	// A new hub kubeconfig (a new bootstrap token) restarts the agent, which reads it at start.
	_, again := agentObjects(t, strings.Replace(hubKubeconfig, "1d2c3b4a", "5e6f7a8b", 1), onboard.AgentOptions{Cluster: edge1, Image: "ghcr.io/holdfast-dev/holdfast:v0.4.0"})
	before := d.Spec.Template.Annotations
	after := as[appsv1.Deployment](t, again, "Deployment/"+onboard.AgentName).Spec.Template.Annotations
	if len(before) == 0 || reflect.DeepEqual(before, after) {
		t.Errorf("pod annotations %v, then %v with a new kubeconfig: want them to change", before, after)
	}
}

// TestAgentManifestsOptions: the options and the chart's values reach the manifests, the options
// over the values, and the values given are left as they were.
func TestAgentManifestsOptions(t *testing.T) {
	values := func() map[string]any {
		rules := []any{map[string]any{"apiGroups": []any{"apps"}, "resources": []any{"deployments"}, "verbs": []any{"get", "list", "watch", "create", "update", "patch", "delete"}}}
		return map[string]any{
			"rbac":         map[string]any{"clusterRole": "", "rules": rules},
			"image":        map[string]any{"repository": "mirror.example/holdfast", "tag": "v0.4.1"},
			"nodeSelector": map[string]any{"site": "store-42"},
			"extraArgs":    []any{"--heartbeat=5s"},
		}
	}
	narrow := values()

	t.Run("narrow ClusterRole", func(t *testing.T) {
		_, objs := agentObjects(t, hubKubeconfig, onboard.AgentOptions{Cluster: edge1, Values: narrow})
		if crb := as[rbacv1.ClusterRoleBinding](t, objs, "ClusterRoleBinding/"+onboard.AgentName); crb.RoleRef.Name != onboard.AgentName {
			t.Errorf("bound to %s, want the chart's ClusterRole %s", crb.RoleRef.Name, onboard.AgentName)
		}
		role := as[rbacv1.ClusterRole](t, objs, "ClusterRole/"+onboard.AgentName)
		if !slices.ContainsFunc(role.Rules, func(r rbacv1.PolicyRule) bool { return slices.Contains(r.Resources, "deployments") }) ||
			!slices.ContainsFunc(role.Rules, func(r rbacv1.PolicyRule) bool { return slices.Contains(r.Resources, "validatingadmissionpolicies") }) {
			t.Errorf("ClusterRole rules %+v, want rbac.rules and the admission policies", role.Rules)
		}
		as[rbacv1.Role](t, objs, "Role/"+onboard.AgentName)
		as[rbacv1.RoleBinding](t, objs, "RoleBinding/"+onboard.AgentName)
		pod := as[appsv1.Deployment](t, objs, "Deployment/"+onboard.AgentName).Spec.Template.Spec
		if c := pod.Containers[0]; c.Image != "mirror.example/holdfast:v0.4.1" || !slices.Contains(c.Args, "--heartbeat=5s") || pod.NodeSelector["site"] != "store-42" {
			t.Errorf("image %s, args %q, node selector %v: the values do not reach the Deployment", c.Image, c.Args, pod.NodeSelector)
		}
	})
	t.Run("options over values", func(t *testing.T) {
		_, objs := agentObjects(t, hubKubeconfig, onboard.AgentOptions{Cluster: edge1, Values: narrow, ClusterRole: "edge-operator", Image: "ghcr.io/holdfast-dev/holdfast:v0.4.0"})
		if crb := as[rbacv1.ClusterRoleBinding](t, objs, "ClusterRoleBinding/"+onboard.AgentName); crb.RoleRef.Name != "edge-operator" {
			t.Errorf("bound to %s, want edge-operator", crb.RoleRef.Name)
		}
		if _, ok := objs["ClusterRole/"+onboard.AgentName]; ok {
			t.Error("a ClusterRole is rendered though the agent is bound to one of the cluster's")
		}
		if c := as[appsv1.Deployment](t, objs, "Deployment/"+onboard.AgentName).Spec.Template.Spec.Containers[0]; c.Image != "ghcr.io/holdfast-dev/holdfast:v0.4.0" {
			t.Errorf("image %s, want the option's", c.Image)
		}
	})
	if !reflect.DeepEqual(narrow, values()) {
		t.Errorf("AgentManifests changed the values it was given: %v", narrow)
	}

	t.Run("existing Secret", func(t *testing.T) {
		_, objs := agentObjects(t, "", onboard.AgentOptions{Cluster: edge1, Values: map[string]any{"hub": map[string]any{"existingSecret": "edge-hub"}}})
		if _, ok := objs["Secret/"+onboard.AgentHubSecret]; ok {
			t.Error("a Secret is rendered though hub.existingSecret names the user's")
		}
		c := as[appsv1.Deployment](t, objs, "Deployment/"+onboard.AgentName).Spec.Template.Spec.Containers[0]
		if !slices.Contains(c.Args, "--hub-kubeconfig-secret="+onboard.Namespace+"/edge-hub") {
			t.Errorf("args %q do not name the user's Secret", c.Args)
		}
	})
}

// TestAgentManifestsImages: an image reference reaches the Deployment as it was given, whatever
// its registry port, tag or digest; one the chart cannot take is refused.
func TestAgentManifestsImages(t *testing.T) {
	digest := "sha256:" + strings.Repeat("ab", 32)
	for image, want := range map[string]string{
		"ghcr.io/holdfast-dev/holdfast:v0.4.0":           "ghcr.io/holdfast-dev/holdfast:v0.4.0",
		"registry.local:5000/holdfast:dev":               "registry.local:5000/holdfast:dev",
		"registry.local:5000/holdfast":                   "registry.local:5000/holdfast:latest",
		"holdfast":                                       "holdfast:latest",
		"ghcr.io/holdfast-dev/holdfast@" + digest:        "ghcr.io/holdfast-dev/holdfast@" + digest,
		"ghcr.io/holdfast-dev/holdfast:v0.4.0@" + digest: "ghcr.io/holdfast-dev/holdfast:v0.4.0@" + digest,
	} {
		_, objs := agentObjects(t, hubKubeconfig, onboard.AgentOptions{Cluster: edge1, Image: image})
		if got := as[appsv1.Deployment](t, objs, "Deployment/"+onboard.AgentName).Spec.Template.Spec.Containers[0].Image; got != want {
			t.Errorf("image %s renders as %s, want %s", image, got, want)
		}
	}
	for _, bad := range []string{"holdfast:", "@" + digest, "holdfast@", "hold fast:v1", "holdfast@md5:0a"} {
		if _, err := onboard.AgentManifests(t.Context(), []byte(hubKubeconfig), onboard.AgentOptions{Cluster: edge1, Image: bad}); err == nil {
			t.Errorf("image %q: no error", bad)
		}
	}
}
