package rollout

import (
	"sort"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/conditions"
	"holdfast.dev/holdfast/internal/textlimit"
)

// maxFailuresNamed bounds status.rollout.failedClusters.
const maxFailuresNamed = 20

// Cluster is one matching cluster as the plan sees it.
type Cluster struct {
	// Key is the Cluster's namespace/name.
	Key    string
	Labels map[string]string
	// Status is its ClusterServiceStatus, nil when there is none yet.
	Status *holdfastv1.ClusterServiceStatus
	// Membership is how the service set selects it (Selection): a Joining cluster that has no
	// revision is held while the revision that selects it waits for approval; a Leaving one
	// keeps its revision while it waits, and is dropped once the rollout goes ahead.
	Membership Membership
}

// Input is what a plan is made from.
type Input struct {
	Strategy holdfastv1.RolloutStrategy
	// Previous is status.rollout as it was; nil before the first revision.
	Previous *holdfastv1.RolloutStatus
	// Revision is the revision of the services as they are declared now, and Selector the
	// cluster selector declared now, in force once the rollout goes ahead.
	Revision string
	Selector holdfastv1.ClusterSelector
	Clusters []Cluster
	// Resume and Abort are the values of the rollout annotations ("" when absent).
	Resume, Abort string
	// Approval is the approval the service set carries (RolloutApproveAnnotation), nil when
	// none: it approves a held revision when it names it and was not handled before.
	Approval *Approval
	Now      time.Time
}

// Plan is the decision: the rollout status, the revision of every cluster that keeps a status
// object (by key; "" for one held: it deploys nothing until a revision waiting for approval is
// approved), and how soon to look again when only time moves the rollout (a pause between
// waves), 0 when the status objects' changes do.
type Plan struct {
	Status  holdfastv1.RolloutStatus
	Assign  map[string]string
	Requeue time.Duration
}

// state is how a cluster is doing with the target revision.
type state int

const (
	notReached state = iota
	inFlight
	healthy
	failed
)

// Make decides the rollout. The first revision goes to every cluster at once: there is nothing
// older to keep. A new revision starts a rollout at the first wave; clusters of later waves keep
// the revision they have, and clusters that have none (they just joined) get the new one. A
// wave takes the revision maxInFlight clusters at a time; when each of its clusters is healthy
// with it or failed, and the pause after it is over, the next wave starts. Reaching the failure
// threshold halts the rollout until a resume; an abort sends every cluster back to the stable
// revision until the services change again.
func Make(in Input) (Plan, error) {
	now := metav1.NewTime(in.Now)
	p := Plan{Assign: make(map[string]string, len(in.Clusters))}
	var st holdfastv1.RolloutStatus
	if in.Previous != nil {
		st = *in.Previous.DeepCopy()
	}
	switch {
	case st.Revision == "":
		st = holdfastv1.RolloutStatus{Revision: in.Revision, StableRevision: in.Revision, Phase: holdfastv1.RolloutComplete,
			StartTime: &now, CompletionTime: &now, ClusterSelector: in.Selector.DeepCopy()}
	case st.Revision != in.Revision:
		stable := st.StableRevision
		if st.Phase == holdfastv1.RolloutComplete {
			stable = st.Revision
		}
		st = holdfastv1.RolloutStatus{Revision: in.Revision, StableRevision: stable, Phase: holdfastv1.RolloutProgressing,
			StartTime: &now, LastHandledResume: st.LastHandledResume, LastHandledAbort: st.LastHandledAbort,
			LastHandledApprove: st.LastHandledApprove, ClusterSelector: st.ClusterSelector}
		if in.Strategy.Approval == holdfastv1.ApprovalManual {
			st.Phase = holdfastv1.RolloutPreviewing
		}
	}
	if in.Abort != "" && in.Abort != st.LastHandledAbort {
		st.LastHandledAbort = in.Abort
		if st.Phase != holdfastv1.RolloutComplete && st.StableRevision != "" {
			st.Phase, st.WaveHealthyTime = holdfastv1.RolloutAborted, nil
		}
	}
	resumed := in.Resume != "" && in.Resume != st.LastHandledResume
	if resumed {
		st.LastHandledResume = in.Resume
		if st.Phase == holdfastv1.RolloutHalted {
			st.Phase = holdfastv1.RolloutProgressing
		}
	}

	if st.Phase.AwaitsApproval() && in.Strategy.Approval != holdfastv1.ApprovalManual {
		st.Phase = holdfastv1.RolloutProgressing // approval was switched off
	}
	held := st.Phase.AwaitsApproval() && !approve(&st, in)
	if !held && st.Phase != holdfastv1.RolloutAborted {
		// Going ahead: the selector declared is in force. An abort keeps the one in force,
		// which a held selector change never replaced (its clusters stay held).
		st.ClusterSelector = in.Selector.DeepCopy()
		in.Clusters = staying(in.Clusters)
	}
	waves, err := Waves(in.Strategy, in.Clusters)
	if err != nil {
		return p, err
	}
	if held {
		p.Status, p.Assign = hold(st, in, waves)
		return p, nil
	}

	target := st.Revision
	if st.Phase == holdfastv1.RolloutAborted {
		target = st.StableRevision
	}
	states := make([]state, len(in.Clusters))
	reason := make([]*metav1.Condition, len(in.Clusters))
	for i, c := range in.Clusters {
		states[i], reason[i] = stateOf(c, target)
	}
	st.FailedClusters, st.Failures = failures(in.Clusters, states, reason, st.FailedClusters, resumed)

	assign := func(i int) {
		p.Assign[in.Clusters[i].Key] = target
		if states[i] == notReached {
			states[i] = inFlight
		}
	}
	switch st.Phase {
	case holdfastv1.RolloutComplete, holdfastv1.RolloutAborted:
		for i, c := range in.Clusters {
			if c.Membership == Joining && st.Phase == holdfastv1.RolloutAborted {
				p.Assign[c.Key] = "" // selected only by the revision aborted
				continue
			}
			assign(i)
		}
	default:
		if threshold := scaled(in.Strategy.FailureThreshold, len(in.Clusters), 1); int(st.Failures) >= threshold {
			st.Phase, st.WaveHealthyTime = holdfastv1.RolloutHalted, nil
		}
		p.Requeue = advance(&st, in.Strategy, waves, states, assign, now)
		// The others keep their revision; one that has none (it just joined) gets the new one.
		for i, c := range in.Clusters {
			if _, ok := p.Assign[c.Key]; ok {
				continue
			}
			if c.Status != nil && c.Status.Spec.Revision != "" {
				p.Assign[c.Key] = c.Status.Spec.Revision
				continue
			}
			assign(i)
		}
	}
	st.Waves = waveStatuses(waves, in.Clusters, p.Assign, states, st.Revision)
	p.Status = st
	return p, nil
}

// advance moves a rollout that is neither complete nor aborted through its waves, from the
// current one, assigning the revision to the clusters that take it now; it returns how long
// the pause after a healthy wave has left to run.
func advance(st *holdfastv1.RolloutStatus, strategy holdfastv1.RolloutStrategy, waves []Wave, states []state, assign func(int), now metav1.Time) time.Duration {
	for st.Phase != holdfastv1.RolloutHalted && int(st.Wave) < len(waves) {
		w := waves[st.Wave]
		limit := scaled(strategy.MaxInFlight, len(w.Clusters), len(w.Clusters))
		busy, done := 0, true
		for _, i := range w.Clusters {
			if states[i] == inFlight {
				busy++
			}
		}
		for _, i := range w.Clusters {
			if states[i] == notReached && busy < limit {
				busy++
				assign(i)
			}
			if states[i] != healthy && states[i] != failed {
				done = false
			}
		}
		if !done {
			st.Phase, st.WaveHealthyTime = holdfastv1.RolloutProgressing, nil
			return 0
		}
		if int(st.Wave) == len(waves)-1 {
			st.Phase, st.StableRevision, st.CompletionTime, st.WaveHealthyTime = holdfastv1.RolloutComplete, st.Revision, &now, nil
			return 0
		}
		if pause := pauseOf(strategy); pause > 0 {
			if st.WaveHealthyTime == nil {
				st.WaveHealthyTime = wholeSecondFrom(now)
			}
			if left := st.WaveHealthyTime.Add(pause).Sub(now.Time); left > 0 {
				st.Phase = holdfastv1.RolloutPausing
				return left
			}
		}
		st.Wave++
		st.Phase, st.WaveHealthyTime = holdfastv1.RolloutProgressing, nil
	}
	return 0
}

// stateOf is how cluster c is doing with revision target: not given it yet, given it and not
// healthy with it yet, healthy (Ready with it), or failed (Ready False for a reason that needs a
// human), with its Ready condition then.
func stateOf(c Cluster, target string) (state, *metav1.Condition) {
	css := c.Status
	if css == nil || css.Spec.Revision != target {
		return notReached, nil
	}
	if css.Status.Revision != target || css.Status.ObservedGeneration != css.Generation {
		return inFlight, nil
	}
	switch ready := conditions.Get(css, holdfastv1.ReadyCondition); {
	case ready == nil:
		return inFlight, nil
	case ready.Status == metav1.ConditionTrue:
		return healthy, nil
	case ready.Status == metav1.ConditionFalse && holdfastv1.NeedsAttention(ready.Reason):
		return failed, ready
	}
	return inFlight, nil
}

// maxFailureMessage bounds the message kept of each failure.
const maxFailureMessage = 256

// failures lists the clusters that failed, at most maxFailuresNamed, and counts those that
// count towards the threshold: not those that had failed when the rollout was resumed.
func failures(clusters []Cluster, states []state, ready []*metav1.Condition, prev []holdfastv1.RolloutFailure, resumed bool) ([]holdfastv1.RolloutFailure, int32) {
	wasResumed := map[string]bool{}
	for _, f := range prev {
		if f.Resumed {
			wasResumed[f.Cluster] = true
		}
	}
	var list []holdfastv1.RolloutFailure
	var count int32
	for i, c := range clusters {
		if states[i] != failed {
			continue
		}
		f := holdfastv1.RolloutFailure{Cluster: c.Key, Reason: ready[i].Reason, Message: textlimit.Cut(ready[i].Message, maxFailureMessage, "…"),
			Resumed: resumed || wasResumed[c.Key]}
		if !f.Resumed {
			count++
		}
		list = append(list, f)
	}
	sort.Slice(list, func(a, b int) bool { return list[a].Cluster < list[b].Cluster })
	if len(list) > maxFailuresNamed {
		list = list[:maxFailuresNamed]
	}
	return list, count
}

// waveStatuses counts each wave's clusters, those assigned the revision, and of those the
// healthy and the failed.
func waveStatuses(waves []Wave, clusters []Cluster, assigned map[string]string, states []state, revision string) []holdfastv1.RolloutWaveStatus {
	out := make([]holdfastv1.RolloutWaveStatus, len(waves))
	for w, wave := range waves {
		ws := holdfastv1.RolloutWaveStatus{Name: wave.Name, Clusters: int32(len(wave.Clusters))}
		for _, i := range wave.Clusters {
			if assigned[clusters[i].Key] != revision {
				continue
			}
			ws.Updated++
			switch states[i] {
			case healthy:
				ws.Healthy++
			case failed:
				ws.Failed++
			}
		}
		out[w] = ws
	}
	return out
}

// scaled resolves a number or percentage of total (rounded up), at least 1; def when unset or
// not valid.
func scaled(v *intstr.IntOrString, total, def int) int {
	n := def
	if v != nil {
		if got, err := intstr.GetScaledValueFromIntOrPercent(v, total, true); err == nil {
			n = got
		}
	}
	return max(n, 1)
}

// wholeSecondFrom is t, or the whole second after it when it has a fraction: status times are
// kept to the second (RFC 3339), so a pause counted from t truncated would end up to a second
// early: a 1 s pause could end at once.
func wholeSecondFrom(t metav1.Time) *metav1.Time {
	whole := t.Truncate(time.Second)
	if whole.Before(t.Time) {
		whole = whole.Add(time.Second)
	}
	return &metav1.Time{Time: whole}
}

// pauseOf is the strategy's pause between waves.
func pauseOf(s holdfastv1.RolloutStrategy) time.Duration {
	if s.PauseBetweenWaves == nil {
		return 0
	}
	return s.PauseBetweenWaves.Duration
}

// staying are the clusters but those leaving: once the rollout goes ahead, the selector declared
// is in force.
func staying(clusters []Cluster) []Cluster {
	out := clusters[:0:0]
	for _, c := range clusters {
		if c.Membership != Leaving {
			out = append(out, c)
		}
	}
	return out
}
