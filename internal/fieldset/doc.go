// Package fieldset is Holdfast's model of server-side apply field ownership: which fields a
// field manager owns in an object (its managedFields entry), the values of those fields, a
// digest of them, and JSON pointers matched against field paths.
//
// Both writing and watching build on it. Package apply records the digest of the fields
// Holdfast owns after each apply (OwnedDigest) and leaves ignored fields (pointers) to their
// owner; package drift compares the owned values of one version of an object with the next to
// tell drift from defaulting, status and other managers' fields. Neither reaches into the other
// for it, so it lives here, with no dependency on either.
//
// Paths are in structured-merge-diff notation (`.spec.containers[name="app"].image`), as the
// API server records them. Values are returned as they are, Secret data included: callers that
// show them redact.
package fieldset
