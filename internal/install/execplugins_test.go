package install_test

import (
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"

	"holdfast.dev/holdfast/internal/install"
)

// TestRenderExecPluginNamespaces: the chart takes the namespaces whose Clusters may use the
// allowed exec plugins (the controller's own cloud identity) under controller and passes them
// to the controller as its flag, and its schema refuses what is no list of namespace names.
func TestRenderExecPluginNamespaces(t *testing.T) {
	objs := rendered(t, map[string]any{"controller": map[string]any{"leader-elect": true,
		"allowed-exec-plugins": "aws-iam-authenticator", "exec-plugin-namespaces": "fleet-eu,fleet-us"}})
	c := as[appsv1.Deployment](t, objs, "Deployment/holdfast-controller").Spec.Template.Spec.Containers[0]
	for _, arg := range []string{"--allowed-exec-plugins=aws-iam-authenticator", "--exec-plugin-namespaces=fleet-eu,fleet-us"} {
		if !slices.Contains(c.Args, arg) {
			t.Errorf("args %q lack %s", c.Args, arg)
		}
	}

	for _, bad := range []string{"team a", "Fleet", "fleet-eu,", "*"} {
		_, err := install.Render(t.Context(), install.Options{Values: map[string]any{"controller": map[string]any{"leader-elect": true, "exec-plugin-namespaces": bad}}})
		if err == nil || !strings.Contains(err.Error(), "exec-plugin-namespaces") {
			t.Errorf("exec-plugin-namespaces %q: error %v, want one naming the value", bad, err)
		}
	}
}
