// Package healthcheck judges the health of objects with the CEL expressions of a service set's
// spec.healthChecks, for kinds kstatus does not know or that a team judges differently. A check
// names a kind and an expression over the live object, self, true when the object is healthy,
// and optionally one true when it failed. Expressions come from users: they are compiled once
// per set of checks, their evaluation is bounded in cost, and an error evaluating one (a field
// not there yet) leaves the object InProgress with the error as the reason rather than failing
// anything else.
package healthcheck
