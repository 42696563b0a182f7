// Package naming derives the names and label values Holdfast writes from user-chosen names,
// which may be longer than a label value (63 characters) allows.
package naming
