// Package alertrule holds the AlertRule controller. It does not send anything — the controllers
// that see events route them to the rules (package alerting) — it reports on each rule whether
// it can be used: its exclusions compile and each target's Secret, in the rule's namespace, has
// what its type needs. The message names what to fix, never a Secret's value.
package alertrule
