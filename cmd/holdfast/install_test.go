package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"helm.sh/helm/v4/pkg/chart/v2/loader"

	"holdfast.dev/holdfast/internal/install"
	"holdfast.dev/holdfast/internal/version"
)

const chartDir = "../../charts/holdfast"

// runHoldfast runs the holdfast command in-process and returns what it printed on stdout.
func runHoldfast(ctx context.Context, args ...string) (string, error) {
	root := newRootCommand()
	var stdout, stderr bytes.Buffer
	root.SetOut(&stdout)
	root.SetErr(&stderr)
	root.SetArgs(args)
	if err := root.ExecuteContext(ctx); err != nil {
		return stdout.String(), fmt.Errorf("holdfast %s: %w\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String(), nil
}

// TestInstallExport: `holdfast install --export` prints what `helm template holdfast
// charts/holdfast -n holdfast-system --set createNamespace=true` prints from the chart on disk
// (the export carries its namespace, which no Helm creates), and passes -n, --set and -f on as
// helm does.
func TestInstallExport(t *testing.T) {
	ch, err := loader.LoadDir(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	valuesFile := t.TempDir() + "/values.yaml"
	if err := os.WriteFile(valuesFile, []byte("serviceMonitor:\n  enabled: true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		args   []string
		ns     string
		values map[string]any
	}{
		{name: "defaults", args: nil, values: map[string]any{"createNamespace": true}},
		{name: "namespace and values", args: []string{"-n", "fleet-ops", "--set", "replicas=3,controller.concurrency=20", "-f", valuesFile}, ns: "fleet-ops",
			values: map[string]any{"createNamespace": true, "replicas": 3, "controller": map[string]any{"concurrency": 20},
				"serviceMonitor": map[string]any{"enabled": true}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := runHoldfast(t.Context(), append([]string{"install", "--export"}, c.args...)...)
			if err != nil {
				t.Fatal(err)
			}
			want, err := install.RenderChart(t.Context(), ch, install.Options{Namespace: c.ns, Values: c.values})
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Errorf("install --export %s differs from the chart rendered by Helm:\n%s", strings.Join(c.args, " "), firstDifference(got, want))
			}
			if !strings.Contains(got, "kind: Namespace") || !strings.Contains(got, "kind: CustomResourceDefinition") {
				t.Errorf("the export lacks the Namespace or the CRDs")
			}
		})
	}
}

func firstDifference(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < len(g) && i < len(w); i++ {
		if g[i] != w[i] {
			return fmt.Sprintf("line %d: got %q, want %q", i+1, g[i], w[i])
		}
	}
	return fmt.Sprintf("got %d lines, want %d", len(g), len(w))
}

// chartSetFlags are the controller flags the chart sets from values of its own (ports, metrics
// TLS, namespace, the pod's name) or that make no sense in a pod (the kubeconfig): they are not
// under .Values.controller.
var chartSetFlags = []string{"kubeconfig", "metrics-bind-address", "metrics-secure", "metrics-cert-dir", "health-probe-bind-address", "leader-election-namespace", "shard-id"}

// TestChartControllerFlags: the chart's controller values are the flags of `holdfast
// controller`, each with the schema type its flag parses, so a flag added, renamed or removed in
// the code fails here until values.schema.json follows.
func TestChartControllerFlags(t *testing.T) {
	data, err := os.ReadFile(chartDir + "/values.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Properties struct {
			Controller struct {
				Properties map[string]struct {
					Type string `json:"type"`
				} `json:"properties"`
				AdditionalProperties bool `json:"additionalProperties"`
			} `json:"controller"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(data, &schema); err != nil {
		t.Fatal(err)
	}
	values := schema.Properties.Controller
	if values.AdditionalProperties {
		t.Error("values.schema.json allows controller flags it does not know")
	}
	types := map[string]string{"bool": "boolean", "int": "integer", "float32": "number", "duration": "string", "string": "string", "stringSlice": "string"}
	seen := map[string]bool{}
	newControllerCommand().Flags().VisitAll(func(f *pflag.Flag) {
		if slices.Contains(chartSetFlags, f.Name) {
			return
		}
		seen[f.Name] = true
		v, ok := values.Properties[f.Name]
		switch {
		case !ok:
			t.Errorf("flag --%s is not a value under controller in values.schema.json", f.Name)
		case types[f.Value.Type()] != v.Type:
			t.Errorf("controller.%s is a %s in values.schema.json; flag --%s parses a %s", f.Name, v.Type, f.Name, f.Value.Type())
		}
	})
	for name := range values.Properties {
		if !seen[name] {
			t.Errorf("values.schema.json has controller.%s, which is no flag of holdfast controller", name)
		}
	}
}

// TestVersionCommand: `holdfast version` prints a semantic version in both forms.
func TestVersionCommand(t *testing.T) {
	text, err := runHoldfast(t.Context(), "version")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(text, "holdfast v") {
		t.Errorf("version printed %q", text)
	}
	out, err := runHoldfast(t.Context(), "version", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var info version.Info
	if err := json.Unmarshal([]byte(out), &info); err != nil {
		t.Fatalf("version -o json printed %q: %v", out, err)
	}
	if info != version.Get() || !strings.HasPrefix(text, "holdfast "+info.Version+" ") {
		t.Errorf("version -o json = %+v, text %q; want %+v", info, text, version.Get())
	}
	if _, err := runHoldfast(t.Context(), "version", "-o", "yaml"); err == nil {
		t.Error("version -o yaml succeeded")
	}
}
