package agent

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

// The agent's manager starts its cache of the status objects on the hub first, and its manager
// waits for that cache before anything else; controller-runtime's manager does not stop waiting
// when its context ends (it loops on the ended context, a core busy for as long as the process
// lives: controller-runtime v0.24 and v0.25, runnableGroup.Start). An agent whose hub does not
// answer and that kept nothing of it (its first start, or its kept answers lost) would so never
// start, and never stop either. So the agent starts its manager once the list its cache starts
// from can be had: from the hub, or from what it kept (Kept answers a list of the status
// objects kept); until then it asks again, and stops when told to.

// startWait is how often the agent asks again for the list its cache starts from.
const startWait = 5 * time.Second

// waitForStatuses returns once the status objects of namespace can be listed through hub (the
// hub answering, or Kept answering for it), or an answer other than the hub not answering came
// (a refusal, which the manager reports as it does today); false when ctx ended first.
func waitForStatuses(ctx context.Context, hub client.Reader, namespace string, interval time.Duration) bool {
	logged := false
	err := wait.PollUntilContextCancel(ctx, interval, true, func(ctx context.Context) (bool, error) {
		err := hub.List(ctx, &holdfastv1.ClusterServiceStatusList{}, client.InNamespace(namespace), client.Limit(1))
		if err == nil || !transient(err) {
			return true, nil
		}
		if !logged {
			logged = true
			ctrl.LoggerFrom(ctx).Info("The hub does not answer and the agent kept nothing of it yet; starting once it answers", "error", err.Error())
		}
		return false, nil
	})
	return err == nil
}
