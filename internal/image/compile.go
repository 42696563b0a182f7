package image

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// reproducibleLDFlags strip the symbol table and DWARF and empty the build ID: the build ID
// hashes the inputs' paths and action IDs, and symbols only make the image larger.
const reproducibleLDFlags = "-s -w -buildid="

// Compile describes how to build the binary.
type Compile struct {
	// Package is the main package to build, as `go build` takes it ("./cmd/holdfast").
	Package string
	// Dir is the directory go build runs in (the module root); the current one when empty.
	Dir string
	// LDFlags are added to the linker flags: the version stamp (see package version).
	LDFlags string
}

// Binary cross-compiles a static binary for the platform into out.
func (c Compile) Binary(ctx context.Context, p v1.Platform, out string) error {
	ldflags := strings.TrimSpace(reproducibleLDFlags + " " + c.LDFlags)
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags", ldflags, "-o", out, c.Package)
	cmd.Dir = c.Dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+p.OS, "GOARCH="+p.Architecture)
	if p.Architecture == "arm" && p.Variant != "" {
		cmd.Env = append(cmd.Env, "GOARM="+strings.TrimPrefix(p.Variant, "v"))
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build %s for %s: %w\n%s", c.Package, p.String(), err, stderr.String())
	}
	return nil
}
