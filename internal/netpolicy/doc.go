// Package netpolicy decides which network addresses the controller may connect to on behalf of
// what users declare: Helm repositories, OCI registries and notification webhooks. A user who
// may write a ServiceTemplate or a notification Secret names a URL, and the controller fetches
// it from inside the hub's network, where cloud metadata services (169.254.169.254), the hub's
// own loopback and cluster-internal Services answer. Without a policy that is a server-side
// request forgery channel.
//
// The check is made on the address actually being dialled, from a net.Dialer Control hook that
// runs after the name is resolved and before the connection is opened (Policy.Control,
// Policy.DialContext). Checking the URL's host name instead would be undone by DNS rebinding (a
// name that resolves to a public address when checked and to 169.254.169.254 when dialled) and
// by redirects; checking each dial covers both, every redirect hop and every address of a name
// included.
//
// Always refused (the default policy): link-local addresses (169.254.0.0/16, fe80::/10, where
// cloud metadata services live), other known metadata addresses (100.100.100.200,
// fd00:ec2::254), unspecified addresses (0.0.0.0/8 and ::; a connection to 0.0.0.0 reaches
// the local host), the limited broadcast address and multicast. IPv4-mapped IPv6 addresses (::ffff:a.b.c.d) and
// the NAT64 well-known prefix (64:ff9b::/96) are judged by the IPv4 address they carry.
//
// Refused only with Options.DenyPrivate: loopback (127.0.0.0/8, ::1) and private ranges
// (10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16, 100.64.0.0/10, fc00::/7), where the hub's
// cluster-internal Services and Pods live. They are allowed by default because chart mirrors and
// webhook receivers inside the cluster or the company network are common, and Holdfast's own
// tests, sandbox and demos serve charts and receive webhooks on 127.0.0.1; an operator whose
// users should not reach internal addresses turns DenyPrivate on and lists the internal hosts
// they may use in Options.AllowedHosts.
//
// Options.AllowedHosts overrides every rule for what it names: a CIDR or IP address allows the
// addresses in it; a host name (or *.domain) allows whatever that name resolves to, which
// trusts the name's DNS. A connection through an HTTP proxy is a connection to the proxy: the
// policy judges the proxy's address, and the proxy must enforce its own egress rules.
//
// Redirects are the caller's choice (SameHost is a CheckRedirect that refuses a redirect to
// another host); every hop that is followed is dialled, so it is judged by the policy anyway.
//
// Errors (*DeniedError, *RedirectError) name the host, the address and the rule, never anything
// the server sent.
package netpolicy
