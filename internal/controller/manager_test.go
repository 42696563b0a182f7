package controller

import (
	"testing"

	"k8s.io/client-go/rest"
)

// TestHubLimit checks the client-side limit of the requests to the hub: --hub-qps wins over
// whatever the config says (ctrl.GetConfig's -1 in-cluster among them, which once made the
// flag a no-op in the chart), a kubeconfig's own limit stays, and none is set otherwise, never
// client-go's default of 5/s.
func TestHubLimit(t *testing.T) {
	for _, tc := range []struct {
		name       string
		cfg        rest.Config
		opts       Options
		qps        float32
		burst      int
		sameConfig bool
	}{
		{name: "in-cluster, no flag", cfg: rest.Config{QPS: -1}, qps: -1, sameConfig: true},
		{name: "in-cluster, --hub-qps 200", cfg: rest.Config{QPS: -1}, opts: Options{HubQPS: 200}, qps: 200, burst: 400},
		{name: "--hub-qps and --hub-burst", cfg: rest.Config{QPS: -1}, opts: Options{HubQPS: 200, HubBurst: 250}, qps: 200, burst: 250},
		{name: "a kubeconfig without a limit", cfg: rest.Config{}, qps: -1},
		{name: "a kubeconfig's own limit", cfg: rest.Config{QPS: 30, Burst: 60}, qps: 30, burst: 60, sameConfig: true},
		{name: "--hub-qps over a kubeconfig's limit", cfg: rest.Config{QPS: 30, Burst: 60}, opts: Options{HubQPS: 500}, qps: 500, burst: 1000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.cfg
			got := HubLimit(&in, tc.opts)
			if got.QPS != tc.qps || got.Burst != tc.burst {
				t.Errorf("QPS %g, burst %d; want %g, %d", got.QPS, got.Burst, tc.qps, tc.burst)
			}
			if (got == &in) != tc.sameConfig {
				t.Errorf("config copied: %t, want %t", got != &in, !tc.sameConfig)
			}
			if in.QPS != tc.cfg.QPS || in.Burst != tc.cfg.Burst {
				t.Errorf("the caller's config changed to QPS %g, burst %d", in.QPS, in.Burst)
			}
		})
	}
}
