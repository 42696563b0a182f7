package main

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/fleetview"
)

// The exit code of `holdfast diff`: with --exit-code 0 for no change, 1 for changes, 2 for a
// refusal (which wins) or an error; without it, 0 after printing, and an error's usual 1.
func TestDiffExitCode(t *testing.T) {
	summary := func(clusters, noChange, changed, refused, failed int32) *fleetview.PreviewView {
		return &fleetview.PreviewView{ServiceSet: "platform", Summary: &fleetview.PreviewSummary{Clusters: clusters,
			Previewed: noChange + changed + refused + failed, NoChange: noChange, Changed: changed, Refused: refused, Failed: failed}}
	}
	cluster := func(outcome holdfastv1.PreviewOutcome) *fleetview.PreviewView {
		return &fleetview.PreviewView{ServiceSet: "platform", Cluster: &fleetview.ClusterPreviewView{Outcome: string(outcome)}}
	}
	failure := errors.New(`reading MultiClusterService platform: multiclusterservices.holdfast.dev "platform" not found`)
	cases := []struct {
		name     string
		v        *fleetview.PreviewView
		err      error
		exitCode bool
		code     int
		print    bool
		warning  string
	}{
		{name: "nothing would change", v: summary(3, 3, 0, 0, 0), exitCode: true, code: 0},
		{name: "changes", v: summary(3, 1, 2, 0, 0), exitCode: true, code: 1},
		{name: "a refusal wins over changes", v: summary(3, 0, 2, 1, 0), exitCode: true, code: 2},
		{name: "changes, without --exit-code", v: summary(3, 0, 2, 1, 0), code: 0},
		{name: "incomplete: by what is known, with a warning", v: summary(5, 2, 1, 0, 0), exitCode: true, code: 1,
			warning: "the preview of 2 clusters is not known"},
		{name: "a failed preview is not known", v: summary(3, 2, 0, 0, 1), exitCode: true, code: 0, warning: "the preview of 1 cluster is not known"},
		{name: "one cluster refused", v: cluster(holdfastv1.PreviewRefused), exitCode: true, code: 2},
		{name: "one cluster changes", v: cluster(holdfastv1.PreviewChanges), exitCode: true, code: 1},
		{name: "one cluster unchanged", v: cluster(holdfastv1.PreviewNoChange), exitCode: true, code: 0},
		{name: "an error is 2 with --exit-code", err: failure, exitCode: true, code: 2, print: true},
		{name: "an error is 1 without", err: failure, code: 1, print: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var log bytes.Buffer
			err := diffResult(c.v, c.err, c.exitCode, &log)
			code, print := 0, false
			if err != nil {
				code, print = exitCode(err)
			}
			if code != c.code || print != c.print {
				t.Errorf("exit code %d, print %v (%v); want %d, %v", code, print, err, c.code, c.print)
			}
			if c.err != nil && !errors.Is(err, c.err) {
				t.Errorf("error %v does not wrap %v", err, c.err)
			}
			if got := log.String(); (c.warning == "") != (got == "") || !strings.Contains(got, c.warning) {
				t.Errorf("stderr = %q, want a warning with %q", got, c.warning)
			}
		})
	}
}

// diff and rollout approve are commands of the binary, with their flags and completions.
func TestDiffAndApproveCommandsAreRegistered(t *testing.T) {
	root := newRootCommand()
	diff, _, err := root.Find([]string{"diff"})
	if err != nil || diff.Name() != "diff" {
		t.Fatalf("holdfast diff: %v", err)
	}
	for _, flag := range []string{"cluster", "namespace", "output", "exit-code", "kubeconfig"} {
		if diff.Flags().Lookup(flag) == nil {
			t.Errorf("diff has no --%s", flag)
		}
	}
	for _, flag := range []string{"cluster", "output"} {
		if _, ok := diff.GetFlagCompletionFunc(flag); !ok {
			t.Errorf("diff --%s has no completion", flag)
		}
	}
	approve, _, err := root.Find([]string{"rollout", "approve"})
	if err != nil || approve.Name() != "approve" {
		t.Fatalf("holdfast rollout approve: %v", err)
	}
	if approve.Flags().Lookup("revision") == nil {
		t.Errorf("rollout approve has no --revision")
	}
	if _, ok := approve.GetFlagCompletionFunc("revision"); !ok {
		t.Errorf("rollout approve --revision has no completion")
	}
	for _, cmd := range []struct {
		name string
		ok   bool
	}{{"diff", diff.ValidArgsFunction != nil}, {"rollout approve", approve.ValidArgsFunction != nil}} {
		if !cmd.ok {
			t.Errorf("%s does not complete SERVICESET", cmd.name)
		}
	}
	rollout, _, _ := root.Find([]string{"rollout"})
	if !strings.Contains(rollout.Long, "approve lets a revision held for approval") {
		t.Errorf("rollout's help does not tell of approve:\n%s", rollout.Long)
	}
}

// What diff refuses before reading the hub, and that --exit-code makes every failure 2.
func TestDiffFlagErrors(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing")
	for _, c := range []struct {
		args []string
		want string
		code int
	}{
		{[]string{"diff", "platform", "--cluster", "a/b/c"}, `--cluster "a/b/c": want NAMESPACE/NAME or NAME`, 1},
		{[]string{"diff", "platform", "--cluster", "a/b/c", "--exit-code"}, `--cluster "a/b/c"`, 2},
		{[]string{"diff", "platform", "-n", "fleet"}, "-n needs --cluster", 1},
		{[]string{"diff", "platform", "--cluster", "fleet/c1", "-n", "other"}, "is in namespace fleet, but -n says other", 1},
		{[]string{"diff", "platform", "-o", "xml", "--exit-code"}, `--output "xml"`, 2},
		{[]string{"diff", "platform", "--exit-code"}, "loading the hub's kubeconfig", 2},
		{[]string{"rollout", "approve", "platform", "--revision", "platform-1"}, "loading the hub's kubeconfig", 1},
	} {
		root := newRootCommand()
		var out bytes.Buffer
		root.SetOut(&out)
		root.SetErr(&out)
		root.SetArgs(append(c.args, "--kubeconfig", missing))
		err := root.ExecuteContext(context.Background())
		code := 0
		if err != nil {
			code, _ = exitCode(err)
		}
		if err == nil || !strings.Contains(err.Error(), c.want) || code != c.code {
			t.Errorf("holdfast %s: %v (exit %d), want an error with %q, exit %d", strings.Join(c.args, " "), err, code, c.want, c.code)
		}
	}
}
