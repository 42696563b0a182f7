package main

import "errors"

// exitError ends the process with code, printing err if there is one: `holdfast drift
// --exit-code` exits 1 for drift (no error to print) and 2 for errors, as flux diff does.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return ""
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// errDrift is `holdfast drift --exit-code`'s answer when something drifted: exit 1, silently.
var errDrift = &exitError{code: 1}

// exitCode is the process's exit code for an error Execute returned, and whether there is a
// message to print.
func exitCode(err error) (code int, print bool) {
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code, ee.err != nil
	}
	return 1, true
}
