// Package fleet is Holdfast's cluster registry: it turns a Cluster's kubeconfig into a validated
// REST config, a client and a cache, probes the cluster's health, and hands those connections to
// the controllers that deploy to and watch the fleet. No other package parses kubeconfigs.
//
// # Dead connections and recoveries
//
// A network can cut a link without a word: no error, no reset, the connection just stops
// delivering. A watch on it hangs until the connection is given up, and misses what changed
// meanwhile. Each connection has its own HTTP/2 transport (transport.go), built as client-go
// builds one but with the health check of golang.org/x/net/http2 set from Options
// (ReadIdleTimeout, PingTimeout: a connection that received nothing for a while is pinged,
// and closed when the ping is not answered; 10s and 5s by default), instead of client-go's
// process-wide environment variables and defaults (30s and 15s); closing it fails the watches on it, and their informers list and watch again on a
// new one. Requests other than watches are bounded by RequestTimeout, which rest.Config.Timeout
// cannot do without ending watches too. A cluster that let one time out gets no more requests
// (but watches and probes) for a backoff, then one at a time until one is answered
// (breaker.go, Connection.Unresponsive): a target that answers probes but hangs on writes
// holds one worker per backoff, not every worker that reaches it. The client, the cache and the probe share the
// transport, so a probe fails while the connection everything else uses is dead.
//
// The Cluster controller records each probe on the Connection (health.go). A success after
// failed probes is a recovery, recorded (Recovered) and reported to the functions given to
// Registry.OnRecovered, whether or not the Cluster stopped being Connected: a partition shorter
// than the connection grace leaves its status as it was, and its consumers must look at the
// cluster again, for what the dead watches never delivered.
//
// # Exec credential plugins
//
// A kubeconfig may run an exec credential plugin the operator allows by name
// (KubeconfigPolicy). The connection's own transport is built from client-go's transport
// configuration of the REST config (useOwnTransport), which sets the plugin up as client-go does:
// its certificate callback in the TLS configuration, its connection tracker around the dialer,
// its token in a round tripper; client-go would refuse the plugin's certificate callback beside
// a custom transport. A plugin runs as the controller, with the controller's cloud identity, so
// only Clusters of the namespaces KubeconfigPolicy.AmbientCredentials allows (platform
// namespaces, see package tenancy) may use one: a tenant's Cluster is refused with
// ErrInvalidKubeconfig and never connects, and everything made for it (probes, discovery,
// status.user, deployments) runs as the credentials its kubeconfig holds.
//
// Kubeconfigs are credentials. Nothing in this package puts their content into an error, a log
// line or a status message: parse errors are reported by category, never by quoting the input.
// Likewise, the server a kubeconfig names may be any endpoint the controller reaches: a probe
// error reports what it answered by HTTP status, never by quoting its body (probe.go, redact).
//
// # Impersonation
//
// Connection.Client acts as Holdfast's own identity on the cluster, the one its kubeconfig
// authenticates. Connection.ClientAs acts as a ServiceAccount of the cluster instead
// (impersonation: Holdfast's identity needs the impersonate verb on that ServiceAccount), for a
// service set that must get only that ServiceAccount's rights there. Those clients share the
// connection's transport and REST mapper, are kept per ServiceAccount (a bounded number per
// connection, impersonation.go) and go with the connection. The API server's refusals while
// impersonating come back as ImpersonationError, saying whom to grant what.
//
// The registry tells the functions given to OnClosed of each connection it lets go, so that
// what others keep about its cache (drift watch handlers) goes with it.
package fleet
