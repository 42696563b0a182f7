package agent

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"holdfast.dev/holdfast/internal/controller"
	"holdfast.dev/holdfast/internal/fleet"
)

// Options say which Cluster the agent is and where it finds its hub credentials.
type Options struct {
	// Cluster is the agent's Cluster on the hub.
	Cluster types.NamespacedName
	// Own reaches the agent's own cluster (in-cluster, or a kubeconfig).
	Own *rest.Config
	// HubSecret is the Secret on its own cluster that holds its hub kubeconfig (KubeconfigKey)
	// and, once it has one, its own token.
	HubSecret types.NamespacedName
	// Scheme knows the types the agent reads and writes.
	Scheme *runtime.Scheme
	// Version is the agent's own version, reported to the hub.
	Version string
	// Heartbeat and TokenLifetime default to DefaultHeartbeat and DefaultTokenLifetime.
	Heartbeat, TokenLifetime time.Duration
	// Controller are the options of the per-cluster reconcile (controller.AgentOptions).
	Controller controller.Options
}

// Run runs the agent until ctx ends: its hub credentials, the reconcile of its Cluster's status
// objects against its own cluster (controller.NewAgentManager, fed by Works), its heartbeat, and
// what it keeps of the hub (Kept), from which it starts when the hub does not answer.
func Run(ctx context.Context, o Options) error {
	own, err := client.New(o.Own, client.Options{Scheme: o.Scheme})
	if err != nil {
		return fmt.Errorf("building a client of the agent's own cluster: %w", err)
	}
	creds, err := Open(ctx, own, o)
	if err != nil {
		if ctx.Err() != nil {
			return nil // stopped before it could start
		}
		return err
	}
	kept, err := NewKept(ctx, own, o.HubSecret.Namespace, o.Cluster.Namespace, ctrl.LoggerFrom(ctx).WithName("kept"))
	if err != nil {
		return err
	}
	hubConfig := controller.HubLimit(kept.WrapConfig(creds.Config()), o.Controller)
	httpClient, err := rest.HTTPClientFor(hubConfig)
	if err != nil {
		return fmt.Errorf("building a client of the hub: %w", err)
	}
	mapper, err := controller.HubMapper(hubConfig, httpClient)
	if err != nil {
		return err
	}
	hub, err := client.New(hubConfig, client.Options{Scheme: o.Scheme, HTTPClient: httpClient, Mapper: mapper})
	if err != nil {
		return fmt.Errorf("building a client of the hub: %w", err)
	}
	mgr, conn, err := controller.NewAgentManager(ctx, hubConfig, controller.AgentOptions{
		Cluster: o.Cluster, Own: o.Own, Works: &Works{Hub: hub, Key: o.Cluster}, Unrecorded: kept, Statuses: kept, Options: o.Controller})
	if err != nil {
		return err
	}
	if err := mgr.Add(kept); err != nil {
		return fmt.Errorf("adding what the agent keeps of the hub: %w", err)
	}
	beat := &Heartbeat{Hub: hub, Cluster: o.Cluster, Own: conn, AgentVersion: o.Version, Interval: o.Heartbeat}
	if err := mgr.Add(manager.RunnableFunc(func(ctx context.Context) error { beat.Run(ctx); return nil })); err != nil {
		return fmt.Errorf("adding the heartbeat: %w", err)
	}
	if !waitForStatuses(ctx, hub, o.Cluster.Namespace, startWait) {
		return nil // stopped before it could start
	}
	ctrl.LoggerFrom(ctx).Info("Holdfast agent started", "cluster", o.Cluster, "version", o.Version)
	err = mgr.Start(ctx)
	// Saved once more after every reconcile stopped: the records of corrections whose status
	// patch failed while the manager stopped (the hub away) are kept for the next agent.
	final, cancel := context.WithTimeout(context.WithoutCancel(ctx), keptFinalFlush)
	defer cancel()
	kept.flush(final)
	return err
}

// Open returns the agent's hub credentials: its bootstrap kubeconfig read from HubSecret on its
// own cluster (own), its own token kept there. The first token is asked for at once, so that a
// bootstrap token that no longer works is said at start.
func Open(ctx context.Context, own client.Client, o Options) (*Credentials, error) {
	secret := &corev1.Secret{}
	if err := own.Get(ctx, o.HubSecret, secret); err != nil {
		return nil, fmt.Errorf("reading the agent's hub Secret %s (apply what holdfast cluster add --pull printed): %w", o.HubSecret, err)
	}
	bootstrap, err := fleet.RESTConfigFromKubeconfig(secret.Data[KubeconfigKey])
	if err != nil {
		return nil, fmt.Errorf("the hub kubeconfig in Secret %s: %w", o.HubSecret, err)
	}
	creds := NewCredentials(bootstrap, o.Cluster.Namespace, SecretStore{Client: own, Key: o.HubSecret}, o.TokenLifetime)
	// Forbidden is the hub's RBAC catching up with a Cluster just registered (its RoleBinding
	// made, or not yet seen by the API server's authorizer), and a hub that does not answer or
	// is too busy (a thousand agents starting at once) may answer soon: asked again for a while.
	// A token refused outright (revoked, expired) is said at once.
	var tokenErr error
	err = wait.PollUntilContextTimeout(ctx, time.Second, openWait, true, func(context.Context) (bool, error) {
		_, tokenErr = creds.Token()
		if tokenErr != nil && (apierrors.IsForbidden(tokenErr) || transient(tokenErr)) {
			return false, nil
		}
		return true, tokenErr
	})
	if err != nil {
		return nil, errors.Join(tokenErr, err)
	}
	return creds, nil
}

// openWait bounds how long Open asks again for a first token its identity is Forbidden, or the
// hub does not give.
const openWait = 2 * time.Minute

// transient reports whether err is the hub not answering, or answering that it cannot now.
func transient(err error) bool {
	return !answered(err) || apierrors.IsTooManyRequests(err) || apierrors.IsServerTimeout(err) ||
		apierrors.IsTimeout(err) || apierrors.IsServiceUnavailable(err) || apierrors.IsInternalError(err)
}
