// Command stamp stands in for holdfast in the image tests: a small main package of the module
// that prints the version stamp, so the tests cross-compile in seconds rather than minutes.
package main

import (
	"encoding/json"
	"os"

	"holdfast.dev/holdfast/internal/version"
)

func main() {
	_ = json.NewEncoder(os.Stdout).Encode(version.Get())
}
