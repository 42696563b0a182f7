// Package e2e drives Holdfast from the outside, the way a user scripts it: it builds the
// holdfast binary, runs its verbs as a child process and talks to the clusters they create only
// through the kubeconfig files they write, with stock clients (client-go, controller-runtime,
// kubectl).
//
// Unit and controller tests call Holdfast's packages directly and so cannot see what only the
// finished program does: flags, what it prints and when, the files it leaves for other tools,
// its exit status, and whether stopping it really stops every process it started. These tests
// cover exactly that, and pay for it with real control planes (see internal/sandbox): they are
// skipped when the control-plane binaries are missing, unless HOLDFAST_REQUIRE_BINARIES=1.
package e2e
