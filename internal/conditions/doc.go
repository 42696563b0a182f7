// Package conditions sets metav1.Conditions on Holdfast objects and computes the Ready summary,
// so that every controller follows the same status contract: each condition has a reason, carries
// the generation it was computed from, and Ready is derived from the others, never set by hand.
package conditions
