package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
)

// complete runs `holdfast __complete ARGS...` in-process, as the shell scripts of `holdfast
// completion` do on TAB: the last argument is the word being completed. It returns the
// completions without their descriptions, and the directive.
func complete(t *testing.T, args ...string) ([]string, cobra.ShellCompDirective) {
	t.Helper()
	root := newRootCommand()
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs(append([]string{cobra.ShellCompRequestCmd}, args...))
	if err := root.ExecuteContext(context.Background()); err != nil {
		t.Fatalf("__complete %q: %v\n%s", args, err, errOut.String())
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	last := lines[len(lines)-1]
	directive, err := strconv.Atoi(strings.TrimPrefix(last, ":"))
	if !strings.HasPrefix(last, ":") || err != nil {
		t.Fatalf("__complete %q printed no directive:\n%s", args, out.String())
	}
	var comps []string
	for _, l := range lines[:len(lines)-1] {
		comps = append(comps, strings.SplitN(l, "\t", 2)[0])
	}
	return comps, cobra.ShellCompDirective(directive)
}

// completeOnHub is complete with --kubeconfig set, placed after the verb so that the last
// argument stays the word being completed.
func completeOnHub(t *testing.T, kubeconfig string, args ...string) ([]string, cobra.ShellCompDirective) {
	t.Helper()
	return complete(t, append([]string{args[0], "--kubeconfig", kubeconfig}, args[1:]...)...)
}

func TestCompleteOutput(t *testing.T) {
	for _, args := range [][]string{
		{"status", "-o", ""},
		{"drift", "--output", ""},
		{"history", "--cluster", "fleet/c1", "-o", ""},
		{"correct", "apps", "-o", ""},
		{"pause", "-o", ""},
		{"resume", "apps", "--output", ""},
	} {
		comps, directive := complete(t, args...)
		if !slices.Equal(comps, outputFormats) || directive != cobra.ShellCompDirectiveNoFileComp {
			t.Errorf("__complete %q = %q, directive %d; want %q, %d", args, comps, directive, outputFormats, cobra.ShellCompDirectiveNoFileComp)
		}
	}
}

// Every fleet verb completes the values of the flags it has, and correct, pause and resume
// their SERVICESET.
func TestCompletionIsRegistered(t *testing.T) {
	root := newRootCommand()
	for _, verb := range []string{"status", "drift", "history", "correct", "pause", "resume"} {
		cmd, _, err := root.Find([]string{verb})
		if err != nil {
			t.Fatal(err)
		}
		for _, flag := range []string{"output", "cluster", "namespace", "service-set"} {
			if cmd.Flags().Lookup(flag) == nil {
				continue
			}
			if _, ok := cmd.GetFlagCompletionFunc(flag); !ok {
				t.Errorf("%s --%s has no completion", verb, flag)
			}
		}
		if takesServiceSet := strings.Contains(cmd.Use, "SERVICESET"); takesServiceSet != (cmd.ValidArgsFunction != nil) {
			t.Errorf("%s: ValidArgsFunction set = %v, want %v", verb, cmd.ValidArgsFunction != nil, takesServiceSet)
		}
	}
	if cmd, _, err := root.Find([]string{"status"}); err != nil || cmd.Flags().Lookup("cluster") == nil {
		t.Fatalf("status has no --cluster: %v", err)
	}
}

// A hub that cannot be read completes nothing, with the error directive, and quickly: neither a
// kubeconfig that is missing nor a hub that never answers may hang the shell.
func TestCompletionWithoutHub(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing")
	for _, args := range [][]string{
		{"status", "--cluster", ""},
		{"drift", "-n", ""},
		{"history", "--service-set", ""},
		{"correct", ""},
		{"pause", ""},
	} {
		comps, directive := completeOnHub(t, missing, args...)
		if len(comps) != 0 || directive != cobra.ShellCompDirectiveError {
			t.Errorf("__complete %q without a hub = %q, directive %d; want nothing, ShellCompDirectiveError", args, comps, directive)
		}
	}
	// SERVICESET is the only argument: the hub is not even read for a second one.
	if comps, directive := completeOnHub(t, missing, "correct", "apps", ""); len(comps) != 0 || directive != cobra.ShellCompDirectiveNoFileComp {
		t.Errorf("__complete correct apps '' = %q, directive %d; want nothing, no files", comps, directive)
	}

	// A hub that accepts connections and never answers.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	go func() {
		var held []net.Conn
		defer func() {
			for _, c := range held {
				_ = c.Close()
			}
		}()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			held = append(held, c)
		}
	}()
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, fmt.Appendf(nil, `apiVersion: v1
kind: Config
clusters: [{name: silent, cluster: {server: "https://%s", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: silent, context: {cluster: silent, user: u}}]
current-context: silent
`, l.Addr()), 0o600); err != nil {
		t.Fatal(err)
	}
	defer func(d time.Duration) { completionTimeout = d }(completionTimeout)
	completionTimeout = 300 * time.Millisecond
	start := time.Now()
	comps, directive := completeOnHub(t, kubeconfig, "status", "--cluster", "")
	if took := time.Since(start); len(comps) != 0 || directive != cobra.ShellCompDirectiveError || took > 5*time.Second {
		t.Errorf("__complete against a silent hub = %q, directive %d after %s; want nothing, ShellCompDirectiveError, after about %s",
			comps, directive, took, completionTimeout)
	}
}

func TestCompletionCommand(t *testing.T) {
	for shell, want := range map[string]string{"bash": "__start_holdfast", "zsh": "#compdef holdfast", "fish": "complete -c holdfast", "powershell": "Register-ArgumentCompleter"} {
		root := newRootCommand()
		var out bytes.Buffer
		root.SetOut(&out)
		root.SetArgs([]string{"completion", shell})
		if err := root.ExecuteContext(context.Background()); err != nil || !strings.Contains(out.String(), want) {
			t.Errorf("holdfast completion %s: %v, output lacks %q (%d bytes)", shell, err, want, out.Len())
		}
	}
}
