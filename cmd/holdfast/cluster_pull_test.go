package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/spf13/pflag"
	appsv1 "k8s.io/api/apps/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"holdfast.dev/holdfast/internal/install"
	"holdfast.dev/holdfast/internal/onboard"
	"holdfast.dev/holdfast/internal/version"
)

// TestPullAgentValues: the agent flags of `holdfast cluster add --pull` reach the agent's
// manifests: --agent-values and --agent-set as the chart's values, --agent-image and
// --agent-cluster-role over them when given, and --agent-image's default when they name no image.
func TestPullAgentValues(t *testing.T) {
	valuesFile := filepath.Join(t.TempDir(), "agent.yaml")
	if err := os.WriteFile(valuesFile, []byte("image: {repository: mirror.example/holdfast, tag: v0.4.1}\nrbac:\n  clusterRole: \"\"\n  rules: [{apiGroups: [apps], resources: [deployments], verbs: [get, list, watch, create, update, patch, delete]}]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	defaultImage := "ghcr.io/holdfast-dev/holdfast:" + version.Get().Version
	cases := []struct {
		name  string
		args  []string
		role  string
		image string
	}{
		{name: "defaults", role: onboard.DefaultAgentClusterRole, image: defaultImage},
		{name: "cluster role", args: []string{"--agent-cluster-role=edge-operator"}, role: "edge-operator", image: defaultImage},
		{name: "values file", args: []string{"--agent-values", valuesFile}, role: onboard.AgentName, image: "mirror.example/holdfast:v0.4.1"},
		{name: "flags over the values file", args: []string{"--agent-values", valuesFile, "--agent-image=registry.local:5000/holdfast:dev", "--agent-cluster-role=admin"},
			role: "admin", image: "registry.local:5000/holdfast:dev"},
		{name: "set", args: []string{"--agent-set", "rbac.clusterRole=,nodeSelector.site=store-42"}, role: onboard.AgentName, image: defaultImage},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := &pullOptions{}
			fs := pflag.NewFlagSet("add", pflag.ContinueOnError)
			p.addFlags(fs)
			if err := fs.Parse(c.args); err != nil {
				t.Fatal(err)
			}
			o, err := p.agentOptions(fs, client.ObjectKey{Namespace: "holdfast-pull-edge-1", Name: "edge-1"})
			if err != nil {
				t.Fatal(err)
			}
			manifests, err := onboard.AgentManifests(t.Context(), []byte("apiVersion: v1\nkind: Config\n"), o)
			if err != nil {
				t.Fatal(err)
			}
			objs, err := install.Objects(string(manifests))
			if err != nil {
				t.Fatal(err)
			}
			var crb rbacv1.ClusterRoleBinding
			var d appsv1.Deployment
			for _, u := range objs {
				var into any
				switch u.GetKind() {
				case "ClusterRoleBinding":
					into = &crb
				case "Deployment":
					into = &d
				default:
					continue
				}
				if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, into); err != nil {
					t.Fatal(err)
				}
			}
			if crb.RoleRef.Name != c.role {
				t.Errorf("the agent is bound to %q, want %q", crb.RoleRef.Name, c.role)
			}
			if len(d.Spec.Template.Spec.Containers) != 1 || d.Spec.Template.Spec.Containers[0].Image != c.image {
				t.Errorf("containers %+v, want one of image %s", d.Spec.Template.Spec.Containers, c.image)
			}
		})
	}
}
