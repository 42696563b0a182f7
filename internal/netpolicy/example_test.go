package netpolicy_test

import (
	"fmt"
	"net/http"

	"holdfast.dev/holdfast/internal/netpolicy"
)

// An operator who keeps users off internal addresses but runs a chart mirror in the cluster.
func Example() {
	policy, err := netpolicy.New(netpolicy.Options{
		DenyPrivate:  true,
		AllowedHosts: []string{"chart-mirror.infra.svc.cluster.local", "10.42.0.0/16"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	client := &http.Client{Transport: policy.Transport(), CheckRedirect: netpolicy.SameHost}

	_, err = client.Get("http://169.254.169.254/latest/meta-data/")
	fmt.Println(err)
	// Output: Get "http://169.254.169.254/latest/meta-data/": dial tcp 169.254.169.254:80: the egress policy refuses connections to 169.254.169.254: cloud metadata address
}
