// Package alerting sends the events of service sets to the AlertRules that select them: across
// the fleet, filtered by kind, severity and exclusions, at most one message per rule, object and
// kind of event in each rate-limit window, to the rule's notification targets through the same
// Dispatcher (package notify) as a service set's own spec.notifications.
//
// A rule is compiled once per generation (Compile); the AlertRule controller reports what does
// not compile on the rule's Ready condition, and the Router skips such a rule. Which service
// sets a rule may see is the tenancy policy's decision (tenancy.Policy.AlertRuleSees): a rule in
// a platform namespace sees them all, a rule in a tenant's namespace only that tenant's
// ServiceSets. A rule's targets' Secrets are in its own namespace, read from the API server when
// its events are sent.
package alerting
