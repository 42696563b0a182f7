package v1alpha1

// Labels and annotations Holdfast puts on objects it manages and reads on its own objects.
const (
	// ManagedByLabel marks every object Holdfast manages on a target cluster, with value
	// ManagedByValue; watches and caches of target clusters select only objects carrying it.
	ManagedByLabel = "holdfast.dev/managed-by"
	ManagedByValue = "holdfast"

	// OwnerLabel holds the owning MultiClusterService's name on managed objects (hashed when
	// longer than a label value may be); OwnerAnnotation holds the full name.
	OwnerLabel      = "holdfast.dev/multiclusterservice"
	OwnerAnnotation = "holdfast.dev/multiclusterservice"
	// ServiceLabel holds the service's name on managed objects.
	ServiceLabel = "holdfast.dev/service"

	// ClusterLabel on a ClusterServiceStatus names its Cluster; MultiClusterServiceLabel its
	// MultiClusterService (hashed when too long, as OwnerLabel).
	ClusterLabel             = "holdfast.dev/cluster"
	MultiClusterServiceLabel = "holdfast.dev/multiclusterservice"

	// StatusLabel on a ClusterServiceInventory names its ClusterServiceStatus (hashed when too
	// long, as OwnerLabel); spec.clusterServiceStatus holds the full name.
	StatusLabel = "holdfast.dev/clusterservicestatus"

	// ReconcileRequestedAtAnnotation on a MultiClusterService or ClusterServiceStatus asks for a
	// full reconcile now; any new value does. The handled value is echoed in status.
	ReconcileRequestedAtAnnotation = "holdfast.dev/reconcile-requested-at"
	// RolloutResumeAnnotation on a MultiClusterService resumes its halted rollout; its value is
	// a token (`holdfast rollout resume` writes the time) echoed in status.rollout once handled.
	RolloutResumeAnnotation = "holdfast.dev/rollout-resume"
	// RolloutAbortAnnotation on a MultiClusterService aborts its rollout: every cluster goes
	// back to the stable revision. Its value is a token echoed in status.rollout once handled.
	RolloutAbortAnnotation = "holdfast.dev/rollout-abort"
	// RevisionLabel on a ControllerRevision names the MultiClusterService it is a revision of
	// (naming.LabelValue of the name).
	RevisionLabel = "holdfast.dev/revision-of"

	// DriftIgnoreAnnotation set to "true" on a live object on a target cluster exempts it from
	// drift handling: Holdfast neither records nor corrects its changes, and leaves it as it is.
	DriftIgnoreAnnotation = "holdfast.dev/drift-ignore"

	// ChangedByAnnotation and ChangedAtAnnotation are stamped on a managed object, with
	// drift.attribution Auto, by the MutatingAdmissionPolicy Holdfast installs on the target, at
	// every update by anyone but Holdfast: the requester's user name, and the latest time of the
	// object's managedFields then (the time the API server gave this update, to the second).
	// Holdfast reads them to name a drift's user and never treats them as drift.
	ChangedByAnnotation = "holdfast.dev/changed-by"
	ChangedAtAnnotation = "holdfast.dev/changed-at"

	// CleanupFinalizer keeps a MultiClusterService or ClusterServiceStatus until what it
	// deployed is withdrawn (or orphaned, per policy).
	CleanupFinalizer = "holdfast.dev/cleanup"
)
