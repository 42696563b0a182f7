package demo

import (
	"context"
	"errors"
	"fmt"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/admission"
	"holdfast.dev/holdfast/internal/fleetview"
	"holdfast.dev/holdfast/internal/naming"
)

// The people of the prevention section, as the target's API server authenticates them (the
// demo impersonates them with the target's admin kubeconfig).
const (
	demoUser       = "alice"
	demoOnCall     = "bob"
	demoOnCallTeam = "platform-oncall"
)

// prevent switches the apps service set to drift.prevention Deny with attribution, shows the
// target's API server refusing alice's edit with the policy's message, and bob (break-glass)
// making it anyway: drift, recorded with his name and put back. It switches prevention Off
// again at the end.
func (d *serviceDemo) prevent(ctx context.Context, timed func(string, time.Time)) error {
	cluster := d.clusters[0].Name
	statusKey := client.ObjectKey{Namespace: d.f.Namespace, Name: naming.StatusName(appsSet, cluster)}
	if err := d.preventionOn(ctx, statusKey, timed); err != nil {
		return err
	}
	alice, err := d.impersonating(cluster, demoUser)
	if err != nil {
		return err
	}
	bob, err := d.impersonating(cluster, demoOnCall, demoOnCallTeam)
	if err != nil {
		return err
	}
	web := client.ObjectKey{Namespace: demoAppNamespace, Name: webSettingsName}
	edit := func(c client.Client, value string, opts ...client.UpdateOption) (declared string, err error) {
		cm := &corev1.ConfigMap{}
		if err := d.targets[cluster].Get(ctx, web, cm); err != nil {
			return "", err
		}
		declared = cm.Data["logLevel"]
		cm.Data["logLevel"] = value
		return declared, c.Update(ctx, cm, append([]client.UpdateOption{client.FieldOwner(editManager)}, opts...)...)
	}

	if err := d.refusedEdit(ctx, cluster, edit, alice); err != nil {
		return err
	}
	if err := d.breakGlassEdit(ctx, cluster, statusKey, edit, bob, timed); err != nil {
		return err
	}
	return d.preventionOff(ctx, cluster)
}

// demoEdit changes data.logLevel of the web settings ConfigMap on the cluster as the client's
// user, and returns the value declared before.
type demoEdit func(c client.Client, value string, opts ...client.UpdateOption) (declared string, err error)

// preventionOn turns prevention and attribution on, and waits until the status object says both
// are active on the target.
func (d *serviceDemo) preventionOn(ctx context.Context, statusKey client.ObjectKey, timed func(string, time.Time)) error {
	start := time.Now()
	if err := d.patchDrift(ctx, func(p *holdfastv1.DriftPolicy) {
		p.Action = holdfastv1.DriftActionCorrect
		p.Attribution = holdfastv1.AttributionAuto
		p.Prevention = holdfastv1.PreventionDeny
		p.BreakGlass = &holdfastv1.BreakGlass{Groups: []string{demoOnCallTeam}}
	}); err != nil {
		return err
	}
	fmt.Fprintf(d.out, "MultiClusterService %s: spec.drift: {action: Correct, attribution: Auto, prevention: Deny, breakGlass: {groups: [%s]}}.\n", appsSet, demoOnCallTeam)
	fmt.Fprintf(d.out, "Holdfast puts a ValidatingAdmissionPolicy and a MutatingAdmissionPolicy on each target: the API server itself\n")
	fmt.Fprintf(d.out, "refuses changes to what Holdfast manages, and stamps who changed what. No webhook server, no agent.\n\n")
	if err := d.poll(ctx, func(ctx context.Context) (bool, string, error) {
		css := &holdfastv1.ClusterServiceStatus{}
		if err := d.hub.Get(ctx, statusKey, css); err != nil {
			return false, "", client.IgnoreNotFound(err)
		}
		for _, t := range []string{holdfastv1.PreventionCondition, holdfastv1.AttributionCondition} {
			if c := meta.FindStatusCondition(css.Status.Conditions, t); c == nil || c.Status != metav1.ConditionTrue {
				return false, fmt.Sprintf("%s: condition %s not True yet", statusKey.Name, t), nil
			}
		}
		return true, "", nil
	}); err != nil {
		return err
	}
	timed("Prevention and attribution active on the target", start)
	return nil
}

// refusedEdit shows the target's API server refusing an edit by someone outside the
// break-glass group.
func (d *serviceDemo) refusedEdit(ctx context.Context, cluster string, edit demoEdit, alice client.Client) error {
	web := client.ObjectKey{Namespace: demoAppNamespace, Name: webSettingsName}
	// The API server enforces a new policy a moment after it is created: dry runs tell when it
	// does. Real edits before would go through, be put back, and count as a fight with the
	// object, which the break-glass edit after would then be part of (Contested, put back late).
	var refused error
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, driftTimeout, true, func(ctx context.Context) (bool, error) {
		_, err := edit(alice, "trace-by-alice", client.DryRunAll)
		switch {
		case apierrors.IsForbidden(err) || apierrors.IsInvalid(err):
			return true, nil
		case err == nil || apierrors.IsConflict(err):
			return false, nil
		}
		return false, client.IgnoreNotFound(err)
	}); err != nil {
		return fmt.Errorf("waiting for the target to refuse a dry run of %s's edit of ConfigMap %s: %w", demoUser, web, err)
	}
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, driftTimeout, true, func(ctx context.Context) (bool, error) {
		_, err := edit(alice, "trace-by-alice")
		switch {
		case apierrors.IsForbidden(err) || apierrors.IsInvalid(err):
			refused = err
			return true, nil
		case apierrors.IsConflict(err):
			// An earlier edit that went through is being put back meanwhile: read it again.
			return false, nil
		}
		return false, client.IgnoreNotFound(err)
	}); err != nil {
		return fmt.Errorf("waiting for the target to refuse %s's edit of ConfigMap %s: %w", demoUser, web, err)
	}
	fmt.Fprintf(d.out, "%s edits ConfigMap %s on %s (data.logLevel) with kubectl edit. The API server answers:\n\n  %v\n\n", demoUser, web, cluster, refused)
	return nil
}

// breakGlassEdit shows an edit by someone in the break-glass group go through, recorded with
// their name and put back.
func (d *serviceDemo) breakGlassEdit(ctx context.Context, cluster string, statusKey client.ObjectKey, edit demoEdit, bob client.Client, timed func(string, time.Time)) error {
	web := client.ObjectKey{Namespace: demoAppNamespace, Name: webSettingsName}
	var declared string
	err := retry.RetryOnConflict(retry.DefaultRetry, func() (err error) {
		declared, err = edit(bob, "trace-by-bob")
		return err
	})
	if err != nil {
		return fmt.Errorf("%s (break-glass) editing ConfigMap %s on %s: %w", demoOnCall, web, cluster, err)
	}
	changed := time.Now()
	fmt.Fprintf(d.out, "%s, in the break-glass group %s, makes the same edit: it goes through, and it is drift.\n", demoOnCall, demoOnCallTeam)
	var record holdfastv1.DriftRecord
	var seen []string
	if err := wait.PollUntilContextTimeout(ctx, driftPoll, driftTimeout, true, func(ctx context.Context) (bool, error) {
		css := &holdfastv1.ClusterServiceStatus{}
		if err := d.hub.Get(ctx, statusKey, css); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		seen = seen[:0]
		for _, r := range css.Status.Drifts {
			if r.Name == web.Name {
				seen = append(seen, fmt.Sprintf("{user %q, detected %s, corrected %v}", r.User, r.DetectedTime.Format(time.RFC3339Nano), r.CorrectedTime != nil))
			}
		}
		for _, r := range css.Status.Drifts {
			if r.Name == web.Name && r.User == demoOnCall && r.CorrectedTime != nil && !r.DetectedTime.Time.Before(changed.Add(-time.Second)) {
				record = r
				return true, nil
			}
		}
		return false, nil
	}); err != nil {
		return fmt.Errorf("waiting for %s's drift of ConfigMap %s (made at %s) to be recorded and corrected; its records: %v: %w",
			demoOnCall, web, changed.Format(time.RFC3339Nano), seen, err)
	}
	timed("Break-glass edit recorded and put back", changed)
	fmt.Fprintf(d.out, "  recorded as changed by %s via %s (%s), put back to %q %s after the edit.\n\n", record.User, record.Manager, record.Operation,
		declared, fleetview.RoundDuration(record.CorrectedTime.Sub(changed)))
	return nil
}

// preventionOff turns prevention off, and waits until Holdfast removed the policy from the
// target.
func (d *serviceDemo) preventionOff(ctx context.Context, cluster string) error {
	if err := d.patchDrift(ctx, func(p *holdfastv1.DriftPolicy) { p.Prevention = holdfastv1.PreventionOff }); err != nil {
		return err
	}
	policy := &admissionv1.ValidatingAdmissionPolicy{}
	policyKey := client.ObjectKey{Name: admission.PreventionName(appsSet, holdfastv1.PreventionDeny)}
	if err := d.poll(ctx, func(ctx context.Context) (bool, string, error) {
		err := d.targets[cluster].Get(ctx, policyKey, policy)
		if apierrors.IsNotFound(err) {
			return true, "", nil
		}
		return false, fmt.Sprintf("ValidatingAdmissionPolicy %s still on %s", policyKey.Name, cluster), err
	}); err != nil {
		return err
	}
	fmt.Fprintf(d.out, "spec.drift.prevention set back to Off: Holdfast removed ValidatingAdmissionPolicy %s from the targets.\n", policyKey.Name)
	return nil
}

// impersonating returns a client of cluster's target that acts as user, in system:masters and
// groups, with the target's admin kubeconfig, which may impersonate.
func (d *serviceDemo) impersonating(cluster, user string, groups ...string) (client.Client, error) {
	for _, t := range d.f.Targets {
		if t.Name() != cluster {
			continue
		}
		cfg := rest.CopyConfig(t.RESTConfig())
		cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: append([]string{"system:masters"}, groups...)}
		return client.New(cfg, client.Options{Scheme: d.targets[cluster].Scheme()})
	}
	return nil, errors.New("no target " + cluster)
}
