// Package sharding divides the fleet's clusters among the controller's replicas, so that each
// cluster is handled (probed, deployed to, corrected) by exactly one replica, and hands clusters
// over when a replica dies or joins without two replicas ever writing to one cluster at once.
//
// # Membership
//
// Each replica (--shard, identity --shard-id, its pod name) keeps one coordination.k8s.io Lease
// in the controller's namespace, named holdfast-shard-<identity> and labelled
// holdfast.dev/shard-member=<group>, renewed every RenewInterval (1.5 s). A Lease counts as live
// while it changed within its duration (6 s) as this replica saw it, on its own clock (as
// client-go's leader election does: renew times written by other machines' clocks are not
// compared with ours). A killed replica is therefore noticed 6-9 s after it was killed and its
// clusters are handled by the others (connected, compared, corrected) about 2 s later, inside the
// 15 s the fleet needs.
// A replica that stops cleanly deletes its Lease and the others take over within one round.
// Leases silent for three durations (pods of a Deployment get new names) are deleted.
//
// # Assignment
//
// A view is the sorted list of live members; View.Owner gives each cluster (namespace/name) to
// one member by rendezvous hashing (highest random weight, FNV-1a 64 mixed by SplitMix64). We
// chose it over contiguous hash ranges, which the API server's sharded list/watch uses, because
// with ranges a member joining or leaving shifts the boundaries of every range and moves clusters
// between members that did not change; with rendezvous hashing a joining member takes about 1/n
// of the clusters and a leaving member's clusters spread over the others, nothing else moves.
// That is what keeps a rebalance from becoming a thundering herd of reconnections: a moved
// cluster costs a new connection, its caches and drift watches, and a full comparison.
//
// # Hand-over without double writes
//
// Each replica publishes in its Lease (annotation holdfast.dev/shard-view) the view it acts on,
// and acts on a cluster only if it owns it under its own view and under the view every live
// member published (Ownership, State). A round is: plan the view of the last read's live
// members; stop acting at once on what the new view takes away (narrowing), cancelling the
// contexts of reconciles running on those clusters; publish the new view in the renewal only
// when none of them runs any more (drained); then read every Lease, and widen what the replica
// acts on from that read alone. Two replicas A and B cannot act on one cluster c at once: A
// acts on c after a read r_A that follows its write w_A, with every view A wrote since w_A
// giving c to A (narrowing), and r_A showed B's view giving c to A, so r_A came before B's
// write w_B that gives c to B; symmetrically r_B came before w_A; then w_A < r_A < w_B < r_B <
// w_A, which cannot be. A member's Lease expiring removes it from the views; the timing
// assumption that makes this safe is the same as leader election's: a replica that cannot renew
// stops acting RenewDeadline (3 s) after its last successful renewal began, and the others
// count it dead only LeaseDuration (6 s) after they saw that renewal. While views disagree
// (a few seconds around a change) the clusters whose owner differs between views are handled
// by nobody; the others are undisturbed.
//
// The per-cluster controllers (Cluster and ClusterServiceStatus) run on every replica and call
// Begin at the start of each reconcile (requests for another replica's clusters are dropped);
// their event predicates drop those earlier (Predicate). Clusters a replica gains are queued
// again (Source) with a random delay within RebalanceSpread, and so are clusters it kept whose
// reconciles it turned away while it stopped acting on them for a moment (a renewal late, views
// disagreeing). The target connections of clusters it lost, with the caches and drift watches
// on them, are closed (Connections) a lease duration later: a replica whose own renewal was late
// takes its clusters back without reconnecting to each. The hub-level controllers
// (MultiClusterService, ServiceSet, ServiceTemplate, Cluster API discovery) only create and
// delete hub objects and stay on the elected leader.
//
// # Why not the API server's sharded list/watch
//
// Kubernetes 1.36 can filter lists and watches by a hash range of an object's UID or namespace
// (ListOptions.shardSelector, feature gate ShardedListAndWatch, alpha). Holdfast does not use
// it yet, and filters on the client side, for these reasons: a status object belongs to the
// cluster named in its spec, which neither its UID nor (in general) its namespace tells, so the
// status objects, the bulk of the hub objects, cannot be split that way; one manager cache
// serves both the per-cluster controllers and the leader's hub-level controllers, which need
// every Cluster; controller-runtime fixes an informer's selector when it starts, so following a
// membership change means restarting informers and relisting, the herd this package avoids;
// and the Cluster objects the selector could split are few and small, while what sharding saves
// (target connections, their caches and watches, reconciles) is saved by the client-side
// filter. A replica sharding that way would also have to use the server's contiguous ranges
// instead of rendezvous hashing (see Assignment). Revisit when the hub holds enough Clusters
// for their cache to matter and the feature is beta.
package sharding
