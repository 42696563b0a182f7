// Package measure reads what Holdfast's benchmarks report from /proc (resident memory, CPU time,
// the machine they ran on) and prints it as Markdown tables, so that a run's output can be kept
// as it is in the program's results folder (bench/<program>/results/, summarised in
// bench/RESULTS.md).
//
// It also counts the requests a Kubernetes client sends, and the bytes of their bodies and of
// the responses it reads (RequestCounter wraps an http.RoundTripper), so that benchmarks can
// report what the controller asked of each API server, and holds the setup of the benchmarks
// that run the controller (Harness: a local fleet, this program's own clients, the controller
// in this process with its requests counted, or several sharded replicas of it, each also
// counted on its own: StartReplica; Start begins a run with them alike), a simulated fleet of many clusters on a few API servers, each
// a namespace with credentials of its own (SimFleet), and the floor a rollout to it is judged
// against (SimFleet.IdealRollout), the bulk object mix they deploy (MixOf) and the
// multi-document YAML builder of their templates (Docs), and what every benchmark's main does:
// check its flags' bounds (ParseFlags, AtLeast) and run with logs and signals set up alike
// (Main).
//
// It lives in the module's internal/ rather than under bench/ because the soak test (test/soak),
// not a benchmark, runs the same way: its flags, its Main and smoke run, its Markdown report.
//
// It reads /proc rather than asking the Go runtime because most of what the benchmarks measure
// runs in child processes (etcd, kube-apiserver, kube-controller-manager), and because RSS is
// what an operator sizing a machine or a pod limit sees. It is Linux-only, like the sandbox.
package measure
