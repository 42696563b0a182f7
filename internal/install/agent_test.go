package install_test

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"helm.sh/helm/v4/pkg/chart/v2/lint"
	"helm.sh/helm/v4/pkg/chart/v2/lint/support"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"holdfast.dev/holdfast/internal/install"
)

// The agent chart's tests here are the chart's own, as Helm installs it: it lints, its values
// reach the manifests, its narrower ClusterRole, its schema and templates refuse what would run
// a broken agent, and the binary embeds it as it is on disk. What `holdfast cluster add --pull`
// prints from it (onboard.AgentManifests) is tested in internal/onboard.

const agentChartDir = "../../charts/holdfast-agent"

// agentRequired are the values the agent chart has no default for.
func agentRequired() map[string]any {
	return map[string]any{"cluster": "holdfast-pull-edge-1/edge-1", "hub": map[string]any{"kubeconfig": "apiVersion: v1\nkind: Config\n"}}
}

// agentNonDefault are values that change every part of the agent chart.
func agentNonDefault() map[string]any {
	v := agentRequired()
	v["createNamespace"] = true
	v["hub"] = map[string]any{"existingSecret": "edge-hub"}
	v["image"] = map[string]any{"repository": "registry.example/platform/holdfast", "digest": "sha256:" + strings.Repeat("ab", 32), "pullPolicy": "Always"}
	v["imagePullSecrets"] = []any{map[string]any{"name": "registry"}}
	v["rbac"] = map[string]any{"clusterRole": "", "rules": []any{
		map[string]any{"apiGroups": []any{"apps"}, "resources": []any{"deployments"}, "verbs": []any{"get", "list", "watch", "create", "update", "patch", "delete"}}}}
	v["resources"] = map[string]any{"requests": map[string]any{"cpu": "50m", "memory": "64Mi"}, "limits": map[string]any{"memory": "512Mi"}}
	v["nodeSelector"] = map[string]any{"kubernetes.io/os": "linux"}
	v["tolerations"] = []any{map[string]any{"key": "edge", "operator": "Exists", "effect": "NoSchedule"}}
	v["affinity"] = map[string]any{"nodeAffinity": map[string]any{"requiredDuringSchedulingIgnoredDuringExecution": map[string]any{
		"nodeSelectorTerms": []any{map[string]any{"matchExpressions": []any{map[string]any{"key": "site", "operator": "In", "values": []any{"store-42"}}}}}}}}
	v["podAnnotations"] = map[string]any{"example.com/team": "platform"}
	v["extraArgs"] = []any{"--heartbeat=5s", "--log-format=json"}
	return v
}

// TestAgentChartLints runs Helm's linter on the agent chart with its required values and with
// non-default ones: no warning, no error.
func TestAgentChartLints(t *testing.T) {
	kv, err := install.KubeVersion()
	if err != nil {
		t.Fatal(err)
	}
	for name, values := range map[string]map[string]any{"required values": agentRequired(), "non-default values": agentNonDefault()} {
		t.Run(name, func(t *testing.T) {
			result := lint.RunAll(agentChartDir, values, install.DefaultNamespace, lint.WithKubeVersion(kv))
			for _, m := range result.Messages {
				if m.Severity >= support.WarningSev {
					t.Errorf("helm lint: %s", m)
				}
			}
		})
	}
}

// renderAgent renders the embedded agent chart as `helm template` does.
func renderAgent(t *testing.T, values map[string]any) (string, error) {
	t.Helper()
	ch, err := install.AgentChart()
	if err != nil {
		t.Fatal(err)
	}
	return install.RenderChart(t.Context(), ch, install.Options{ReleaseName: "holdfast-agent", Values: values})
}

// TestAgentChartRefusesBadValues: values.schema.json and the templates refuse what would run a
// broken agent, with a message naming the value.
func TestAgentChartRefusesBadValues(t *testing.T) {
	with := func(key string, value any) map[string]any {
		v := agentRequired()
		v[key] = value
		return v
	}
	without := func(key string) map[string]any {
		v := agentRequired()
		delete(v, key)
		return v
	}
	cases := map[string]struct {
		values map[string]any
		want   string
	}{
		"no cluster":                     {without("cluster"), "cluster"},
		"cluster without namespace":      {with("cluster", "edge-1"), "cluster"},
		"unknown value":                  {with("replicas", 2), "replicas"},
		"unknown hub value":              {with("hub", map[string]any{"kubeconfig": "x", "secret": "y"}), "secret"},
		"unknown rbac value":             {with("rbac", map[string]any{"clusterRole": "", "create": true}), "create"},
		"no hub kubeconfig":              {with("hub", map[string]any{}), "hub.kubeconfig or hub.existingSecret is required"},
		"kubeconfig and existing secret": {with("hub", map[string]any{"kubeconfig": "x", "existingSecret": "y"}), "both set"},
		"secret name":                    {with("hub", map[string]any{"existingSecret": "Hub Secret"}), "existingSecret"},
		"rule without verbs":             {with("rbac", map[string]any{"clusterRole": "", "rules": []any{map[string]any{"resources": []any{"pods"}}}}), "verbs"},
		"argument not a flag":            {with("extraArgs", []any{"heartbeat=5s"}), "extraArgs"},
		"wrong pull policy":              {with("image", map[string]any{"repository": "x", "pullPolicy": "Sometimes"}), "pullPolicy"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := renderAgent(t, c.values)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("rendering with %v: error %v, want one naming %s", c.values, err, c.want)
			}
		})
	}
}

// TestAgentChartNonDefault: every value reaches what `helm install` applies; with
// hub.existingSecret the chart writes no Secret and points the agent at the user's.
func TestAgentChartNonDefault(t *testing.T) {
	manifest, err := renderAgent(t, agentNonDefault())
	if err != nil {
		t.Fatal(err)
	}
	objs, err := install.Objects(manifest)
	if err != nil {
		t.Fatal(err)
	}
	byKey := indexed(objs)
	if _, ok := byKey["Namespace/"+install.DefaultNamespace]; !ok {
		t.Error("createNamespace renders no Namespace")
	}
	if _, ok := byKey["Secret/holdfast-agent-hub"]; ok {
		t.Error("hub.existingSecret still renders the chart's Secret")
	}
	d := as[appsv1.Deployment](t, byKey, "Deployment/holdfast-agent")
	pod := d.Spec.Template.Spec
	c := pod.Containers[0]
	wantArgs := []string{"agent", "--hub-kubeconfig-secret=" + install.DefaultNamespace + "/edge-hub", "--cluster=holdfast-pull-edge-1/edge-1",
		"--heartbeat=5s", "--log-format=json"}
	if !slices.Equal(c.Args, wantArgs) {
		t.Errorf("args %q, want %q", c.Args, wantArgs)
	}
	if c.Image != "registry.example/platform/holdfast@sha256:"+strings.Repeat("ab", 32) || c.ImagePullPolicy != corev1.PullAlways ||
		len(pod.ImagePullSecrets) != 1 || pod.ImagePullSecrets[0].Name != "registry" {
		t.Errorf("image %s, pull policy %s, pull secrets %v", c.Image, c.ImagePullPolicy, pod.ImagePullSecrets)
	}
	if c.Resources.Requests.Cpu().String() != "50m" || c.Resources.Limits.Memory().String() != "512Mi" {
		t.Errorf("resources %+v", c.Resources)
	}
	if pod.NodeSelector["kubernetes.io/os"] != "linux" || len(pod.Tolerations) != 1 || pod.Tolerations[0].Key != "edge" ||
		pod.Affinity == nil || pod.Affinity.NodeAffinity == nil {
		t.Errorf("node selector %v, tolerations %+v, affinity %+v", pod.NodeSelector, pod.Tolerations, pod.Affinity)
	}
	// The user's Secret is theirs: no checksum of a kubeconfig the chart does not hold.
	if want := map[string]string{"example.com/team": "platform"}; !reflect.DeepEqual(d.Spec.Template.Annotations, want) {
		t.Errorf("pod annotations %v, want %v", d.Spec.Template.Annotations, want)
	}
}

// TestAgentChartNarrowRBAC: with rbac.clusterRole "" `helm install` binds the agent to the
// chart's own ClusterRole, which allows what the agent itself does on its cluster and
// rbac.rules, and to a Role for the Secrets of its namespace; nothing cluster-wide on Secrets.
func TestAgentChartNarrowRBAC(t *testing.T) {
	values := agentRequired()
	values["rbac"] = map[string]any{"clusterRole": "", "rules": []any{
		map[string]any{"apiGroups": []any{""}, "resources": []any{"configmaps"}, "verbs": []any{"get", "list", "watch", "create", "update", "patch", "delete"}}}}
	manifest, err := renderAgent(t, values)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := install.Objects(manifest)
	if err != nil {
		t.Fatal(err)
	}
	byKey := indexed(objs)
	role := as[rbacv1.ClusterRole](t, byKey, "ClusterRole/holdfast-agent")
	allows := func(rules []rbacv1.PolicyRule, group, resource, verb string) bool {
		for _, r := range rules {
			if containsOrAll(r.APIGroups, group) && containsOrAll(r.Resources, resource) && containsOrAll(r.Verbs, verb) {
				return true
			}
		}
		return false
	}
	for _, want := range [][3]string{
		{"admissionregistration.k8s.io", "validatingadmissionpolicies", "patch"},
		{"admissionregistration.k8s.io", "validatingadmissionpolicybindings", "delete"},
		{"admissionregistration.k8s.io", "mutatingadmissionpolicies", "watch"},
		{"admissionregistration.k8s.io", "mutatingadmissionpolicybindings", "create"},
		{"", "namespaces", "get"},
		{"", "namespaces", "create"},
		{"authentication.k8s.io", "selfsubjectreviews", "create"},
		{"authorization.k8s.io", "selfsubjectaccessreviews", "create"},
		{"", "configmaps", "patch"},
	} {
		if !allows(role.Rules, want[0], want[1], want[2]) {
			t.Errorf("ClusterRole holdfast-agent does not allow %s on %s.%s: %+v", want[2], want[1], want[0], role.Rules)
		}
	}
	for _, never := range [][3]string{{"", "secrets", "get"}, {"", "namespaces", "delete"}, {"", "pods", "get"}, {"*", "*", "*"}} {
		if allows(role.Rules, never[0], never[1], never[2]) {
			t.Errorf("ClusterRole holdfast-agent allows %s on %s.%s", never[2], never[1], never[0])
		}
	}
	ns := as[rbacv1.Role](t, byKey, "Role/holdfast-agent")
	if ns.Namespace != install.DefaultNamespace || !allows(ns.Rules, "", "secrets", "patch") || !allows(ns.Rules, "", "secrets", "get") {
		t.Errorf("Role holdfast-agent in %s: %+v, want the Secrets of its namespace", ns.Namespace, ns.Rules)
	}
	for key, ref := range map[string]string{"ClusterRoleBinding/holdfast-agent": "ClusterRole/holdfast-agent", "RoleBinding/holdfast-agent": "Role/holdfast-agent"} {
		var roleRef rbacv1.RoleRef
		var subjects []rbacv1.Subject
		if strings.HasPrefix(key, "Cluster") {
			b := as[rbacv1.ClusterRoleBinding](t, byKey, key)
			roleRef, subjects = b.RoleRef, b.Subjects
		} else {
			b := as[rbacv1.RoleBinding](t, byKey, key)
			roleRef, subjects = b.RoleRef, b.Subjects
		}
		want := []rbacv1.Subject{{Kind: "ServiceAccount", Name: "holdfast-agent", Namespace: install.DefaultNamespace}}
		if roleRef.Kind+"/"+roleRef.Name != ref || len(subjects) != 1 || subjects[0] != want[0] {
			t.Errorf("%s binds %+v to %s/%s, want the agent's ServiceAccount to %s", key, subjects, roleRef.Kind, roleRef.Name, ref)
		}
	}
}

// indexed indexes objects by kind/name.
func indexed(objs []*unstructured.Unstructured) map[string]*unstructured.Unstructured {
	out := map[string]*unstructured.Unstructured{}
	for _, o := range objs {
		out[o.GetKind()+"/"+o.GetName()] = o
	}
	return out
}

// containsOrAll reports whether list holds v or "*".
func containsOrAll(list []string, v string) bool {
	for _, s := range list {
		if s == v || s == "*" {
			return true
		}
	}
	return false
}

// TestEmbeddedAgentChartIsTheDirectory: what the binary embeds renders as charts/holdfast-agent
// on disk does through Helm's own directory loader.
func TestEmbeddedAgentChartIsTheDirectory(t *testing.T) {
	fromDisk, err := loader.LoadDir(agentChartDir)
	if err != nil {
		t.Fatal(err)
	}
	for name, values := range map[string]map[string]any{"required values": agentRequired(), "non-default values": agentNonDefault()} {
		want, err := install.RenderChart(t.Context(), fromDisk, install.Options{ReleaseName: "holdfast-agent", Values: values})
		if err != nil {
			t.Fatal(err)
		}
		got, err := renderAgent(t, values)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("%s: the embedded agent chart renders differently from %s", name, agentChartDir)
		}
	}
}

// TestAgentChartVersionIsTheHubs: the agent runs the hub's image, and a release sets both
// charts' versions together.
func TestAgentChartVersionIsTheHubs(t *testing.T) {
	hub, err := install.Chart()
	if err != nil {
		t.Fatal(err)
	}
	agent, err := install.AgentChart()
	if err != nil {
		t.Fatal(err)
	}
	if agent.Metadata.Version != hub.Metadata.Version || agent.Metadata.AppVersion != hub.Metadata.AppVersion {
		t.Errorf("agent chart %s (app %s), hub chart %s (app %s): a release sets both", agent.Metadata.Version, agent.Metadata.AppVersion,
			hub.Metadata.Version, hub.Metadata.AppVersion)
	}
	hubImage, _ := hub.Values["image"].(map[string]any)
	agentImage, _ := agent.Values["image"].(map[string]any)
	for _, key := range []string{"repository", "tag", "pullPolicy"} {
		if hubImage[key] != agentImage[key] {
			t.Errorf("image.%s: agent chart %v, hub chart %v", key, agentImage[key], hubImage[key])
		}
	}
}
