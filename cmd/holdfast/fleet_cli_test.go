package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	sigsyaml "sigs.k8s.io/yaml"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/controller"
	"holdfast.dev/holdfast/internal/fleetview"
	"holdfast.dev/holdfast/internal/fleetview/fleetviewtest"
	"holdfast.dev/holdfast/internal/localfleet"
	"holdfast.dev/holdfast/internal/naming"
	"holdfast.dev/holdfast/internal/sandbox"
	"holdfast.dev/holdfast/internal/testsupport"
)

// TestFleetVerbsAgainstHub runs the CLI verbs in-process against a real hub API server holding
// the fixture fleet (status objects with fabricated status, as the controller would write it):
// what they print must be what the pure rendering of the same objects gives, after a round trip
// through the API server; correct, pause and resume must change the objects on the hub.
func TestFleetVerbsAgainstHub(t *testing.T) {
	ctx := t.Context()
	hub, c := startHub(t)
	fixtures := fleetviewtest.Statuses()
	createFleet(t, c, fixtures)
	cli := &cliRunner{kubeconfig: hub.KubeconfigPath()}

	t.Run("status", func(t *testing.T) {
		var got fleetview.FleetStatus
		cli.runJSON(t, &got, "status")
		want := fleetview.BuildFleetStatus(fixtures, fleetview.Filter{})
		if a, b := mustJSON(t, got), mustJSON(t, want); a != b {
			t.Errorf("status -o json from the hub:\n%s\nwant, from the same objects rendered locally:\n%s", a, b)
		}
		out := cli.run(t, "status", "--cluster", "fleet/c1")
		for _, w := range []string{"fleet/c1", "web", "cache", "ContinuousWithDriftDetection", "2 services: 1 ready, 1 not ready; 3 drifted objects on 1 cluster."} {
			if !strings.Contains(out, w) {
				t.Errorf("status --cluster fleet/c1 lacks %q:\n%s", w, out)
			}
		}
		if strings.Contains(out, "c2") || strings.Contains(out, "infra") {
			t.Errorf("status --cluster fleet/c1 shows other clusters:\n%s", out)
		}
		out = cli.run(t, "status", "--cluster", "c1", "--service-set", "infra")
		if !strings.Contains(out, "other/c1") || !strings.Contains(out, "ClusterNotReady") || strings.Contains(out, "fleet/") {
			t.Errorf("status --cluster c1 --service-set infra:\n%s", out)
		}
	})

	t.Run("drift", func(t *testing.T) {
		out := cli.run(t, "drift", "--all", "--service-set", "apps")
		for _, w := range []string{"Deployment.apps shop/web", ".spec.replicas: 2 -> 5", "kubectl-scale (Update/scale)", "Contested",
			".data.password: (redacted) -> (redacted)", "Corrected in 350ms", "3 drifted objects (1 Contested), 2 corrected drifts."} {
			if !strings.Contains(out, w) {
				t.Errorf("drift --all lacks %q:\n%s", w, out)
			}
		}
		var dl fleetview.DriftList
		cli.runJSON(t, &dl, "drift", "--service", "cache")
		if len(dl.Items) != 1 || dl.Items[0].State != "Missing" || dl.Items[0].Drift == nil || dl.Items[0].Drift.Detection != "Comparison" {
			t.Errorf("drift --service cache = %+v, want the Missing Service", dl.Items)
		}
		all := cli.run(t, "drift", "--all", "-o", "json") + cli.run(t, "drift", "--all", "-o", "yaml") + out
		for _, secret := range []string{fleetviewtest.SecretOld, fleetviewtest.SecretNew, fleetviewtest.SecretToken} {
			if strings.Contains(all, secret) {
				t.Errorf("drift shows the Secret value %q", secret)
			}
		}
	})

	t.Run("drift -o yaml is the json document", func(t *testing.T) {
		var fromJSON, fromYAML fleetview.DriftList
		cli.runJSON(t, &fromJSON, "drift", "--all")
		if err := sigsyaml.Unmarshal([]byte(cli.run(t, "drift", "--all", "-o", "yaml")), &fromYAML); err != nil {
			t.Fatal(err)
		}
		if a, b := mustJSON(t, fromYAML), mustJSON(t, fromJSON); a != b || len(fromJSON.Items) == 0 {
			t.Errorf("drift -o yaml:\n%s\nwant the -o json document:\n%s", a, b)
		}
	})

	t.Run("drift --exit-code", func(t *testing.T) {
		for _, tc := range []struct {
			args []string
			code int
		}{
			{args: []string{"--service-set", "apps"}, code: 1},               // drifted objects
			{args: []string{"--service-set", "no-such-set"}, code: 0},        // nothing drifted
			{args: []string{"--cluster", "a/b/c"}, code: 2},                  // an error
			{args: []string{"--service-set", "apps", "-o", "json"}, code: 1}, // the document, then 1
		} {
			_, err := cli.exec(append([]string{"drift", "--exit-code"}, tc.args...)...)
			code := 0
			if err != nil {
				code, _ = exitCode(err)
			}
			if code != tc.code {
				t.Errorf("drift --exit-code %v: exit code %d (%v), want %d", tc.args, code, err, tc.code)
			}
		}
		if _, err := cli.exec("drift", "--service-set", "apps"); err != nil {
			t.Errorf("drift without --exit-code fails on drift: %v", err)
		}
	})

	t.Run("history", func(t *testing.T) {
		var h fleetview.DriftHistory
		cli.runJSON(t, &h, "history", "--limit", "2")
		if h.Total != 5 || len(h.Items) != 2 || h.Items[0].Object.Kind != "Secret" || h.Items[1].Object.Kind != "Service" {
			t.Errorf("history --limit 2 = %+v, want the 2 newest of 5", h)
		}
		if !h.Items[0].Drift.DetectedTime.Equal(fleetviewtest.Now.Add(-time.Minute)) {
			t.Errorf("detectedTime = %v, want %v", h.Items[0].Drift.DetectedTime, fleetviewtest.Now.Add(-time.Minute))
		}
		out := cli.run(t, "history", "--service", "web", "--cluster", "c1")
		for _, w := range []string{"350ms", "2s", "kubectl-edit (Update)", "4 drift records"} {
			if !strings.Contains(out, w) {
				t.Errorf("history --service web lacks %q:\n%s", w, out)
			}
		}
	})

	t.Run("correct a service set and wait", func(t *testing.T) {
		done := cli.start("correct", "apps", "--wait", "--timeout", "30s")
		value := waitAnnotation(t, c, &holdfastv1.MultiClusterService{ObjectMeta: metav1.ObjectMeta{Name: "apps"}}, "")
		if _, err := time.Parse(time.RFC3339Nano, value); err != nil {
			t.Errorf("requested-at %q is not an RFC 3339 time: %v", value, err)
		}
		select {
		case r := <-done:
			t.Fatalf("correct --wait returned before the request was handled: %q, %v", r.out, r.err)
		case <-time.After(time.Second):
		}
		patchStatus(t, c, &holdfastv1.MultiClusterService{ObjectMeta: metav1.ObjectMeta{Name: "apps"}}, value)
		r := <-done
		if r.err != nil {
			t.Fatalf("correct --wait: %v\n%s", r.err, r.out)
		}
		for _, w := range []string{"Requested a full reconcile of service set apps", value, "Handled by 2 clusters", "3 objects still drifted",
			"Waiting; not handled yet by fleet/c1, fleet/c2"} {
			if !strings.Contains(r.out, w) {
				t.Errorf("correct --wait lacks %q:\n%s", w, r.out)
			}
		}
	})

	t.Run("correct one cluster and wait", func(t *testing.T) {
		css := &holdfastv1.ClusterServiceStatus{ObjectMeta: metav1.ObjectMeta{Namespace: "fleet", Name: naming.StatusName("apps", "c2")}}
		done := cli.start("correct", "apps", "--cluster", "c2", "--wait", "-o", "json")
		value := waitAnnotation(t, c, css, "")
		patchStatus(t, c, css, value)
		r := <-done
		if r.err != nil {
			t.Fatalf("correct --cluster c2 --wait: %v\n%s", r.err, r.out)
		}
		var got fleetview.CorrectionRequestList
		if err := json.Unmarshal([]byte(r.out), &got); err != nil {
			t.Fatalf("%v:\n%s", err, r.out)
		}
		want := fleetview.CorrectionRequest{ServiceSet: "apps", ClusterNamespace: "fleet", Cluster: "c2", RequestedAt: value, Handled: true,
			Target: fleetview.TargetRef{Kind: "ClusterServiceStatus", Namespace: "fleet", Name: "apps.c2"}, Clusters: ptr(1), DriftedObjects: ptr(int32(0))}
		if got.Kind != fleetview.KindCorrectionRequest || len(got.Items) != 1 || mustJSON(t, got.Items[0]) != mustJSON(t, want) {
			t.Errorf("correct -o json = %s, want an item %s", r.out, mustJSON(t, want))
		}
		mcs := &holdfastv1.MultiClusterService{}
		if err := c.Get(ctx, client.ObjectKey{Name: "apps"}, mcs); err != nil {
			t.Fatal(err)
		}
		if mcs.Annotations[holdfastv1.ReconcileRequestedAtAnnotation] == value {
			t.Errorf("a request for one cluster was written to the service set")
		}
	})

	t.Run("correct without wait, and what fails", func(t *testing.T) {
		before := waitAnnotation(t, c, &holdfastv1.MultiClusterService{ObjectMeta: metav1.ObjectMeta{Name: "apps"}}, "")
		out := cli.run(t, "correct", "apps")
		after := waitAnnotation(t, c, &holdfastv1.MultiClusterService{ObjectMeta: metav1.ObjectMeta{Name: "apps"}}, before)
		if !strings.Contains(out, after) || strings.Contains(out, "Handled") {
			t.Errorf("correct apps printed %q, want the new value %s and no wait", out, after)
		}
		for _, c := range []struct {
			args []string
			want string
		}{
			{[]string{"correct", "nope"}, "not found"},
			{[]string{"correct", "apps", "--cluster", "c9"}, "not deployed to a cluster named c9"},
			{[]string{"correct", "apps", "--cluster", "other/c1"}, "not deployed to cluster other/c1"},
			{[]string{"correct", "apps", "--wait", "--timeout", "1s"}, "not handled yet by fleet/c1, fleet/c2"},
			{[]string{"status", "-o", "xml"}, `--output "xml": want table, wide, json, yaml or name`},
		} {
			out, err := cli.exec(c.args...)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s: %v (output %q), want an error with %q", strings.Join(c.args, " "), err, out, c.want)
			}
		}
	})

	t.Run("pause and resume", func(t *testing.T) {
		var res fleetview.PauseRequestList
		cli.runJSON(t, &res, "pause", "apps")
		if res.Kind != fleetview.KindPauseRequest || len(res.Items) != 1 || !res.Items[0].Paused || !res.Items[0].Changed {
			t.Errorf("pause -o json = %+v", res)
		}
		if !pausedOnHub(t, c, "apps") {
			t.Fatalf("spec.paused is not set after pause")
		}
		if out := cli.run(t, "pause", "apps"); !strings.Contains(out, "already paused") {
			t.Errorf("second pause printed %q", out)
		}
		// A request to a paused service set is made, with a warning.
		if out, err := cli.exec("correct", "apps"); err != nil || !strings.Contains(out, "Warning: service set apps is paused") {
			t.Errorf("correct of a paused service set: %v\n%s", err, out)
		}
		if out := cli.run(t, "resume", "apps"); !strings.Contains(out, "Resumed service set apps") {
			t.Errorf("resume printed %q", out)
		}
		if pausedOnHub(t, c, "apps") {
			t.Fatalf("spec.paused is still set after resume")
		}
		if _, err := cli.exec("pause", "nope"); err == nil || !strings.Contains(err.Error(), "not found") {
			t.Errorf("pause of a missing service set: %v", err)
		}
	})

	t.Run("rollout status, resume and abort", func(t *testing.T) {
		if _, err := cli.exec("rollout", "resume", "infra"); err == nil || !strings.Contains(err.Error(), "has no rollout") {
			t.Errorf("rollout resume of a set without a rollout: %v", err)
		}
		mcs := &holdfastv1.MultiClusterService{}
		if err := c.Get(ctx, client.ObjectKey{Name: "infra"}, mcs); err != nil {
			t.Fatal(err)
		}
		mcs.Spec.Rollout = &holdfastv1.RolloutStrategy{WaveLabel: "wave"}
		if err := c.Update(ctx, mcs); err != nil {
			t.Fatal(err)
		}
		mcs.Status.Rollout = &holdfastv1.RolloutStatus{Revision: "infra-0a1b2c3d4e", StableRevision: "infra-9f8e7d6c5b",
			Phase: holdfastv1.RolloutHalted, Wave: 1, Failures: 1,
			Waves:          []holdfastv1.RolloutWaveStatus{{Name: "wave=1", Clusters: 1, Updated: 1, Healthy: 1}, {Name: "wave=2", Clusters: 2, Updated: 1, Failed: 1}},
			FailedClusters: []holdfastv1.RolloutFailure{{Cluster: "fleet/c2", Reason: holdfastv1.UnhealthyReason, Message: "Deployment web: crash loop"}}}
		if err := c.Status().Update(ctx, mcs); err != nil {
			t.Fatal(err)
		}
		out := cli.run(t, "rollout", "status", "infra")
		for _, w := range []string{"revision infra-0a1b2c3d4e Halted at wave 2 of 2 (wave=2)", "stable revision infra-9f8e7d6c5b", "fleet/c2", "Deployment web: crash loop"} {
			if !strings.Contains(out, w) {
				t.Errorf("rollout status lacks %q:\n%s", w, out)
			}
		}
		var doc fleetview.RolloutStatusList
		cli.runJSON(t, &doc, "rollout", "status", "infra")
		if doc.Kind != fleetview.KindRolloutStatus || len(doc.Items) != 1 || doc.Items[0].Phase != "Halted" || len(doc.Items[0].FailedClusters) != 1 {
			t.Errorf("rollout status -o json = %+v", doc)
		}
		for _, verb := range []string{"resume", "abort"} {
			if out := cli.run(t, "rollout", verb, "infra"); !strings.Contains(out, "to "+verb+" its rollout") {
				t.Errorf("rollout %s printed %q", verb, out)
			}
		}
		if err := c.Get(ctx, client.ObjectKey{Name: "infra"}, mcs); err != nil {
			t.Fatal(err)
		}
		for _, a := range []string{holdfastv1.RolloutResumeAnnotation, holdfastv1.RolloutAbortAnnotation} {
			if mcs.Annotations[a] == "" {
				t.Errorf("annotation %s not set: %v", a, mcs.Annotations)
			}
		}
	})

	// After the correct subtests, whose waits read the annotation a request of this one would
	// also set.
	t.Run("-o wide and -o name", func(t *testing.T) {
		out := cli.run(t, "status", "-o", "wide", "--cluster", "fleet/c1")
		for _, w := range []string{"REVISION", "LAST FULL RECONCILE", "OBSERVED GENERATION", "9f86d081", "0c1d2e3f", "Service shop/cache was deleted"} {
			if !strings.Contains(out, w) {
				t.Errorf("status -o wide lacks %q:\n%s", w, out)
			}
		}
		out = cli.run(t, "drift", "-o", "wide", "--service-set", "apps")
		for _, w := range []string{"DETECTION", "Comparison", "kubectl-scale", "Update/scale", ".metadata.labels.tier"} {
			if !strings.Contains(out, w) {
				t.Errorf("drift -o wide lacks %q:\n%s", w, out)
			}
		}
		for _, c := range []struct {
			args []string
			want string
		}{
			{[]string{"status", "-o", "name"}, "clusterservicestatus.holdfast.dev/fleet/apps.c1\nclusterservicestatus.holdfast.dev/fleet/apps.c2\nclusterservicestatus.holdfast.dev/other/infra.c1\n"},
			{[]string{"drift", "-o", "name", "--cluster", "fleet/c1"}, "fleet/c1/service/shop/cache\nfleet/c1/deployment.apps/shop/web\nfleet/c1/secret/shop/creds\n"},
			{[]string{"drift", "-o", "name", "--cluster", "fleet/c2"}, ""},
			{[]string{"history", "-o", "name", "--service", "cache"}, "fleet/c1/service/shop/cache\n"},
			{[]string{"correct", "apps", "--cluster", "fleet/c2", "-o", "name"}, "clusterservicestatus.holdfast.dev/fleet/apps.c2\n"},
			{[]string{"pause", "infra", "-o", "name"}, "multiclusterservice.holdfast.dev/infra\n"},
			{[]string{"resume", "infra", "-o", "name"}, "multiclusterservice.holdfast.dev/infra\n"},
		} {
			if out := cli.run(t, c.args...); out != c.want {
				t.Errorf("holdfast %s printed:\n%s\nwant:\n%s", strings.Join(c.args, " "), out, c.want)
			}
		}
	})

	t.Run("completion of names from the hub", func(t *testing.T) {
		for _, c := range []struct {
			args []string
			want []string
		}{
			{[]string{"status", "--cluster", ""}, []string{"fleet/c1", "fleet/c2", "other/c1"}},
			{[]string{"drift", "--cluster", "fleet/"}, []string{"fleet/c1", "fleet/c2"}},
			{[]string{"history", "-n", "fleet", "--cluster", ""}, []string{"c1", "c2", "fleet/c1", "fleet/c2"}},
			{[]string{"correct", "apps", "--cluster", ""}, []string{"fleet/c1", "fleet/c2", "other/c1"}},
			{[]string{"status", "-n", ""}, []string{"fleet", "other"}},
			{[]string{"status", "--service-set", ""}, []string{"apps", "infra"}},
			{[]string{"correct", ""}, []string{"apps", "infra"}},
			{[]string{"pause", "a"}, []string{"apps"}},
			{[]string{"resume", ""}, []string{"apps", "infra"}},
		} {
			comps, directive := completeOnHub(t, cli.kubeconfig, c.args...)
			if strings.Join(comps, " ") != strings.Join(c.want, " ") || directive != cobra.ShellCompDirectiveNoFileComp {
				t.Errorf("__complete %q = %q, directive %d; want %q, ShellCompDirectiveNoFileComp", c.args, comps, directive, c.want)
			}
		}
	})
}

// createFleet creates the Clusters, MultiClusterServices and ClusterServiceStatuses of the
// fixtures on the hub, with the labels the controller gives them, and writes their status.
func createFleet(t *testing.T, c client.Client, fixtures []holdfastv1.ClusterServiceStatus) {
	t.Helper()
	ctx := t.Context()
	created := map[string]bool{}
	for i := range fixtures {
		f := &fixtures[i]
		if !created["ns/"+f.Namespace] {
			mustCreate(t, c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: f.Namespace}})
			created["ns/"+f.Namespace] = true
		}
		if key := "mcs/" + f.Spec.MultiClusterService; !created[key] {
			mustCreate(t, c, &holdfastv1.MultiClusterService{
				ObjectMeta: metav1.ObjectMeta{Name: f.Spec.MultiClusterService},
				Spec: holdfastv1.MultiClusterServiceSpec{
					SyncMode: holdfastv1.SyncModeContinuousWithDriftDetection,
					Services: []holdfastv1.Service{{Name: "web", Template: holdfastv1.TemplateReference{Name: "web", Namespace: "fleet"}}},
				},
			})
			created[key] = true
		}
		if key := "cluster/" + f.Namespace + "/" + f.Spec.Cluster; !created[key] {
			mustCreate(t, c, &holdfastv1.Cluster{
				ObjectMeta: metav1.ObjectMeta{Namespace: f.Namespace, Name: f.Spec.Cluster},
				Spec:       holdfastv1.ClusterSpec{KubeconfigSecretRef: holdfastv1.SecretKeyReference{Name: f.Spec.Cluster + "-kubeconfig"}},
			})
			created[key] = true
		}
		css := &holdfastv1.ClusterServiceStatus{
			ObjectMeta: metav1.ObjectMeta{Namespace: f.Namespace, Name: naming.StatusName(f.Spec.MultiClusterService, f.Spec.Cluster),
				Labels: map[string]string{
					holdfastv1.MultiClusterServiceLabel: naming.LabelValue(f.Spec.MultiClusterService),
					holdfastv1.ClusterLabel:             naming.LabelValue(f.Spec.Cluster),
				}},
			Spec: f.Spec,
		}
		mustCreate(t, c, css)
		css.Status = f.Status
		if err := c.Status().Update(ctx, css); err != nil {
			t.Fatalf("writing the status of %s/%s: %v", css.Namespace, css.Name, err)
		}
	}
}

func mustCreate(t *testing.T, c client.Client, obj client.Object) {
	t.Helper()
	if err := c.Create(t.Context(), obj); err != nil {
		t.Fatalf("creating %T %s: %v", obj, client.ObjectKeyFromObject(obj), err)
	}
}

// waitAnnotation waits until obj's reconcile-requested-at annotation is set to a value other
// than not, and returns it.
func waitAnnotation(t *testing.T, c client.Client, obj client.Object, not string) string {
	t.Helper()
	var value string
	err := wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return false, err
		}
		value = obj.GetAnnotations()[holdfastv1.ReconcileRequestedAtAnnotation]
		return value != "" && value != not, nil
	})
	if err != nil {
		t.Fatalf("waiting for %s on %s: %v", holdfastv1.ReconcileRequestedAtAnnotation, client.ObjectKeyFromObject(obj), err)
	}
	return value
}

// patchStatus plays the controller: it echoes value in status.lastHandledReconcileAt.
func patchStatus(t *testing.T, c client.Client, obj client.Object, value string) {
	t.Helper()
	patch := fmt.Appendf(nil, `{"status":{"lastHandledReconcileAt":%q}}`, value)
	if err := c.Status().Patch(t.Context(), obj, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatalf("setting lastHandledReconcileAt of %s: %v", client.ObjectKeyFromObject(obj), err)
	}
}

func pausedOnHub(t *testing.T, c client.Client, name string) bool {
	t.Helper()
	mcs := &holdfastv1.MultiClusterService{}
	if err := c.Get(t.Context(), client.ObjectKey{Name: name}, mcs); err != nil {
		t.Fatal(err)
	}
	return mcs.Spec.Paused
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func ptr[T any](v T) *T { return &v }

// startHub starts a hub API server with Holdfast's CRDs for t (or skips t without the
// control-plane binaries) and returns it with a client of the controller's scheme.
func startHub(t *testing.T) (*sandbox.ControlPlane, client.Client) {
	t.Helper()
	testsupport.RequireBinaries(t)
	hub, err := sandbox.Start(t.Context(), sandbox.Options{Name: "hub"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = hub.Stop() })
	if err := localfleet.InstallCRDs(t.Context(), hub); err != nil {
		t.Fatal(err)
	}
	scheme, err := controller.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(hub.RESTConfig(), client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return hub, c
}

// cliRunner runs the holdfast command in-process against one hub.
type cliRunner struct{ kubeconfig string }

type cliResult struct {
	out string
	err error
}

// exec runs the command and returns its stdout and stderr, and its error.
func (r *cliRunner) exec(args ...string) (string, error) {
	root := newRootCommand()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(append(args, "--kubeconfig", r.kubeconfig, "--log-level", "error"))
	err := root.ExecuteContext(context.Background())
	return out.String(), err
}

func (r *cliRunner) run(t *testing.T, args ...string) string {
	t.Helper()
	out, err := r.exec(args...)
	if err != nil {
		t.Fatalf("holdfast %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func (r *cliRunner) runJSON(t *testing.T, into any, args ...string) {
	t.Helper()
	out := r.run(t, append(args, "-o", "json")...)
	if err := json.Unmarshal([]byte(out), into); err != nil {
		t.Fatalf("holdfast %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// start runs the command in the background.
func (r *cliRunner) start(args ...string) <-chan cliResult {
	done := make(chan cliResult, 1)
	go func() {
		out, err := r.exec(args...)
		done <- cliResult{out, err}
	}()
	return done
}
