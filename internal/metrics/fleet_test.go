package metrics

import "testing"

func TestObjectGauges(t *testing.T) {
	web := map[string]string{"cluster": "fleet/b", "multiclusterservice": "web"}
	SetManagedObjects("fleet/b", "web", 12)
	SetContested("fleet/b", "web", 2)
	SetManagedObjects("fleet/b", "web", 10) // a gauge is replaced, not added to
	if got := mustValue(t, "holdfast_managed_objects", web); got != 10 {
		t.Fatalf("managed objects = %v, want 10", got)
	}
	if got := mustValue(t, "holdfast_contested_objects", web); got != 2 {
		t.Fatalf("contested objects = %v, want 2", got)
	}

	SetManagedObjects("fleet/b", "db", 3)
	DeleteManagedObjects("fleet/b", "web")
	for _, name := range []string{"holdfast_managed_objects", "holdfast_contested_objects"} {
		if _, ok := value(t, name, web); ok {
			t.Errorf("%s still has a series for the deleted pair", name)
		}
	}
	db := map[string]string{"cluster": "fleet/b", "multiclusterservice": "db"}
	if got := mustValue(t, "holdfast_managed_objects", db); got != 3 {
		t.Fatalf("the other service set's gauge = %v after deleting web, want 3 kept", got)
	}
}

func TestWatchStarted(t *testing.T) {
	labels := func(kind string) map[string]string { return map[string]string{"cluster": "fleet/c", "kind": kind} }
	deployments, _ := value(t, "holdfast_watch_starts_total", labels("Deployment"))
	services, _ := value(t, "holdfast_watch_starts_total", labels("Service"))
	WatchStarted("fleet/c", "Deployment")
	WatchStarted("fleet/c", "Deployment") // a restart
	WatchStarted("fleet/c", "Service")
	if got := mustValue(t, "holdfast_watch_starts_total", labels("Deployment")) - deployments; got != 2 {
		t.Errorf("Deployment watch starts moved by %v, want 2", got)
	}
	if got := mustValue(t, "holdfast_watch_starts_total", labels("Service")) - services; got != 1 {
		t.Errorf("Service watch starts moved by %v, want 1", got)
	}
}

func TestForgetCluster(t *testing.T) {
	DriftDetected("fleet/gone", "web", "Deployment", "Changed")
	DriftCorrected("fleet/gone", "web", "Deployment")
	SetManagedObjects("fleet/gone", "web", 1)
	SetContested("fleet/gone", "web", 1)
	WatchStarted("fleet/gone", "Deployment")
	WatchStarted("fleet/kept", "Deployment")

	ForgetCluster("fleet/gone")

	for _, name := range []string{
		"holdfast_drifts_detected_total", "holdfast_drifts_corrected_total", "holdfast_managed_objects",
		"holdfast_contested_objects", "holdfast_watch_starts_total",
	} {
		if _, ok := value(t, name, map[string]string{"cluster": "fleet/gone"}); ok {
			t.Errorf("%s still has a series for the forgotten cluster", name)
		}
	}
	if _, ok := value(t, "holdfast_watch_starts_total", map[string]string{"cluster": "fleet/kept"}); !ok {
		t.Errorf("ForgetCluster removed another cluster's series")
	}
}
