// Package testsupport holds what the real-control-plane test suites share: the rule for
// missing control-plane binaries (skip locally, fail in CI) and a goroutine-safe log sink that
// redaction tests search for secret material.
package testsupport
