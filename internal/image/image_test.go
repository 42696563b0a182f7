package image_test

import (
	"archive/tar"
	"bytes"
	"crypto/x509"
	"debug/elf"
	"encoding/json"
	"encoding/pem"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/validate"

	"holdfast.dev/holdfast/internal/image"
	"holdfast.dev/holdfast/internal/version"
)

// The tests build the image around testdata/stamp, a small main package of the module, instead
// of holdfast itself: cross-compiling holdfast for two platforms takes minutes, the stamp
// program seconds, and everything else (flags, layers, config, index, layout) is the same code.
const (
	stampVersion = "v1.2.3"
	stampCommit  = "0123456789abcdef0123456789abcdef01234567"
	stampDate    = "2026-03-01T12:00:00Z"
)

var (
	created = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	ref     = mustTag("registry.example/holdfast:" + stampVersion)
)

func mustTag(s string) name.Tag {
	tag, err := name.NewTag(s)
	if err != nil {
		panic(err)
	}
	return tag
}

func options(binDir string) image.Options {
	stamp := "-X holdfast.dev/holdfast/internal/version.version=" + stampVersion +
		" -X holdfast.dev/holdfast/internal/version.commit=" + stampCommit +
		" -X holdfast.dev/holdfast/internal/version.date=" + stampDate
	return image.Options{
		Compile:   image.Compile{Package: "./internal/image/testdata/stamp", Dir: "../..", LDFlags: stamp},
		Platforms: image.Platforms,
		Metadata:  image.Metadata{Created: created, Version: stampVersion, Revision: stampCommit, Source: "https://example.com/holdfast"},
		BinDir:    binDir,
	}
}

// build builds the image for both platforms and writes its layout into a new directory.
func build(t *testing.T) (image.Built, string) {
	t.Helper()
	began := time.Now()
	built, err := image.Build(t.Context(), options(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "oci")
	if err := image.WriteLayout(dir, built.Index, ref); err != nil {
		t.Fatal(err)
	}
	t.Logf("Built and wrote the image in %s", time.Since(began).Round(time.Millisecond))
	return built, dir
}

// TestBuildIsReproducible builds the image twice, the second time with an empty Go build cache
// so that every package and the binaries are compiled again: the index digest, and every file
// of the two OCI layouts, must be the same.
func TestBuildIsReproducible(t *testing.T) {
	first, dir1 := build(t)
	t.Setenv("GOCACHE", t.TempDir())
	second, dir2 := build(t)

	d1, err := first.Index.Digest()
	if err != nil {
		t.Fatal(err)
	}
	d2, err := second.Index.Digest()
	if err != nil {
		t.Fatal(err)
	}
	if d1 != d2 {
		t.Errorf("index digests differ: %s, then %s", d1, d2)
	}
	files1, files2 := readTree(t, dir1), readTree(t, dir2)
	if len(files1) != len(files2) {
		t.Errorf("the layouts have %d and %d files", len(files1), len(files2))
	}
	for path, data := range files1 {
		if !bytes.Equal(data, files2[path]) {
			t.Errorf("%s differs between the two builds", path)
		}
	}
	t.Logf("Index digest %s, %d files in the layout", d1, len(files1))
}

// TestImage checks what a user of the image relies on, read back from the OCI layout with
// go-containerregistry's layout reader: one image per platform holding a static binary for that
// architecture, run as `/holdfast controller` by a non-root user, CA roots, and a tarball that
// docker load reads.
func TestImage(t *testing.T) {
	built, dir := build(t)
	lp, err := layout.FromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	top, err := lp.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	topManifest, err := top.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(topManifest.Manifests) != 1 || topManifest.Manifests[0].Annotations["org.opencontainers.image.ref.name"] != ref.TagStr() ||
		topManifest.Manifests[0].Annotations["io.containerd.image.name"] != ref.String() {
		t.Fatalf("index.json = %+v, want one entry tagged %s, named %s", topManifest.Manifests, ref.TagStr(), ref)
	}
	idx, err := top.ImageIndex(topManifest.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	if err := validate.Index(idx); err != nil {
		t.Fatalf("the index read back is not valid: %v", err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(im.Manifests) != len(image.Platforms) {
		t.Fatalf("the index has %d manifests, want %d", len(im.Manifests), len(image.Platforms))
	}
	machines := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}
	for i, desc := range im.Manifests {
		p := image.Platforms[i]
		t.Run(p.String(), func(t *testing.T) {
			if desc.Platform == nil || !desc.Platform.Equals(p) {
				t.Fatalf("manifest %d is for %v, want %s", i, desc.Platform, p.String())
			}
			img, err := idx.Image(desc.Digest)
			if err != nil {
				t.Fatal(err)
			}
			cf, err := img.ConfigFile()
			if err != nil {
				t.Fatal(err)
			}
			c := cf.Config
			if c.User != "65532:65532" || strings.Join(c.Entrypoint, " ") != "/holdfast" || strings.Join(c.Cmd, " ") != "controller" {
				t.Errorf("config runs %q %q as %q, want /holdfast controller as 65532:65532", c.Entrypoint, c.Cmd, c.User)
			}
			if !cf.Created.Time.Equal(created) || cf.OS != p.OS || cf.Architecture != p.Architecture {
				t.Errorf("config: created %v, platform %s/%s; want %v, %s", cf.Created.Time, cf.OS, cf.Architecture, created, p.String())
			}
			if c.Labels["org.opencontainers.image.version"] != stampVersion || c.Labels["org.opencontainers.image.revision"] != stampCommit {
				t.Errorf("labels = %v", c.Labels)
			}
			files := extract(t, img)
			bin := files["holdfast"]
			if bin.hdr == nil || bin.hdr.Mode != 0o755 || bin.hdr.Uid != 0 {
				t.Fatalf("/holdfast: %+v, want root-owned, mode 0755", bin.hdr)
			}
			f, err := elf.NewFile(bytes.NewReader(bin.data))
			if err != nil {
				t.Fatalf("/holdfast is not an ELF binary: %v", err)
			}
			if f.Machine != machines[p.Architecture] {
				t.Errorf("/holdfast is for %s, want %s", f.Machine, machines[p.Architecture])
			}
			for _, prog := range f.Progs {
				if prog.Type == elf.PT_INTERP || prog.Type == elf.PT_DYNAMIC {
					t.Errorf("/holdfast is dynamically linked (%s)", prog.Type)
				}
			}
			if runtime.GOOS == p.OS && runtime.GOARCH == p.Architecture {
				expectStamp(t, bin.data)
			}
			expectCARoots(t, files[strings.TrimPrefix(image.CAPath, "/")].data)
			if passwd := string(files["etc/passwd"].data); !strings.Contains(passwd, "nonroot:x:65532:65532:") {
				t.Errorf("/etc/passwd lacks the non-root user:\n%s", passwd)
			}
			if tmp := files["tmp"].hdr; tmp == nil || tmp.Mode != 0o1777 {
				t.Errorf("/tmp: %+v, want mode 1777", tmp)
			}
			for path, f := range files {
				if !f.hdr.ModTime.Equal(time.Unix(0, 0)) {
					t.Errorf("%s has modification time %v, want the epoch", path, f.hdr.ModTime)
				}
			}
		})
	}

	t.Run("docker tarball", func(t *testing.T) {
		p := image.Platforms[0]
		img, err := built.Image(p)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), image.BinaryName(p)+".tar")
		if err := image.WriteTarball(path, img, ref); err != nil {
			t.Fatal(err)
		}
		loaded, err := tarball.ImageFromPath(path, &ref)
		if err != nil {
			t.Fatalf("reading the tarball as docker load does: %v", err)
		}
		want, err := img.ConfigName()
		if err != nil {
			t.Fatal(err)
		}
		got, err := loaded.ConfigName()
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("the tarball's image has config %s, want %s (the layout's %s image)", got, want, p.String())
		}
		if err := validate.Image(loaded); err != nil {
			t.Errorf("the tarball's image is not valid: %v", err)
		}
	})
}

type file struct {
	hdr  *tar.Header
	data []byte
}

// extract reads the image's flattened filesystem.
func extract(t *testing.T, img v1.Image) map[string]file {
	t.Helper()
	rc := mutate.Extract(img)
	defer rc.Close()
	files := map[string]file{}
	tr := tar.NewReader(rc)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return files
		}
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		files[strings.TrimSuffix(hdr.Name, "/")] = file{hdr: hdr, data: data}
	}
}

// expectStamp runs the binary taken out of the image and checks the version it was stamped with.
func expectStamp(t *testing.T, bin []byte) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "stamp")
	if err := os.WriteFile(path, bin, 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := exec.CommandContext(t.Context(), path).Output()
	if err != nil {
		t.Fatalf("running the binary from the image: %v", err)
	}
	var got version.Info
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("the binary printed %q: %v", out, err)
	}
	if got.Version != stampVersion || got.Commit != stampCommit || got.Date != stampDate {
		t.Errorf("the binary says %+v, want version %s, commit %s, date %s", got, stampVersion, stampCommit, stampDate)
	}
}

func expectCARoots(t *testing.T, data []byte) {
	t.Helper()
	n := 0
	for {
		var block *pem.Block
		block, data = pem.Decode(data)
		if block == nil {
			break
		}
		if _, err := x509.ParseCertificate(block.Bytes); err != nil {
			t.Errorf("CA root %d does not parse: %v", n, err)
		}
		n++
	}
	if n < 100 {
		t.Errorf("%s holds %d CA roots, want the NSS trust store (over 100)", image.CAPath, n)
	}
}

func readTree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		files[strings.TrimPrefix(path, dir)] = data
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}
