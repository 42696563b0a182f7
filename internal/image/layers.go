package image

import (
	"archive/tar"
	"bytes"
	"encoding/pem"
	"fmt"
	"io"
	"os"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"golang.org/x/crypto/x509roots/fallback/bundle"
)

// The image's fixed paths and user.
const (
	BinaryPath = "/holdfast"
	CAPath     = "/etc/ssl/certs/ca-certificates.crt"
	UID        = 65532
	homeDir    = "/home/nonroot"
)

// epoch is every tar entry's modification time.
var epoch = time.Unix(0, 0).UTC()

// entry is one file or directory of a layer.
type entry struct {
	name     string // without the leading slash
	mode     int64
	uid      int
	dir      bool
	data     []byte
	fromFile string // the content is this file's, read when the layer is
}

// baseEntries are the files every image has under the binary: CA roots, the user database and
// the directories the user may write to (when the root filesystem is writable at all).
func baseEntries() []entry {
	return []entry{
		{name: "etc/", mode: 0o755, dir: true},
		{name: "etc/group", mode: 0o644, data: fmt.Appendf(nil, "root:x:0:\nnonroot:x:%d:\n", UID)},
		{name: "etc/passwd", mode: 0o644, data: fmt.Appendf(nil,
			"root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:%d:%d:nonroot:%s:/sbin/nologin\n", UID, UID, homeDir)},
		{name: "etc/ssl/", mode: 0o755, dir: true},
		{name: "etc/ssl/certs/", mode: 0o755, dir: true},
		{name: CAPath[1:], mode: 0o644, data: caBundle()},
		{name: "home/", mode: 0o755, dir: true},
		{name: homeDir[1:] + "/", mode: 0o700, uid: UID, dir: true},
		{name: "tmp/", mode: 0o1777, dir: true},
	}
}

// caBundle is the NSS trust store in PEM. Roots NSS trusts only for certificates issued before
// a date are left out: a PEM file cannot carry that constraint.
func caBundle() []byte {
	var b bytes.Buffer
	for root := range bundle.Roots() {
		if root.Constraint != nil {
			continue
		}
		_ = pem.Encode(&b, &pem.Block{Type: "CERTIFICATE", Bytes: root.Certificate})
	}
	return b.Bytes()
}

// writeTar writes entries as a tar stream with fixed owners and times.
func writeTar(w io.Writer, entries []entry) error {
	tw := tar.NewWriter(w)
	for _, e := range entries {
		if err := writeEntry(tw, e); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return fmt.Errorf("closing the layer: %w", err)
	}
	return nil
}

func writeEntry(tw *tar.Writer, e entry) error {
	hdr := &tar.Header{Name: e.name, Mode: e.mode, Uid: e.uid, Gid: e.uid, ModTime: epoch, Format: tar.FormatPAX}
	var body io.Reader
	switch {
	case e.dir:
		hdr.Typeflag = tar.TypeDir
	case e.fromFile != "":
		f, err := os.Open(e.fromFile)
		if err != nil {
			return fmt.Errorf("opening %s: %w", e.fromFile, err)
		}
		defer f.Close()
		fi, err := f.Stat()
		if err != nil {
			return fmt.Errorf("reading %s: %w", e.fromFile, err)
		}
		hdr.Typeflag, hdr.Size, body = tar.TypeReg, fi.Size(), f
	default:
		hdr.Typeflag, hdr.Size, body = tar.TypeReg, int64(len(e.data)), bytes.NewReader(e.data)
	}
	if err := tw.WriteHeader(hdr); err != nil {
		return fmt.Errorf("writing the tar header of %s: %w", e.name, err)
	}
	if body != nil {
		if _, err := io.Copy(tw, body); err != nil {
			return fmt.Errorf("writing %s into the layer: %w", e.name, err)
		}
	}
	return nil
}

// layer makes an OCI layer of entries. The tar stream is produced again each time the layer is
// read (for its digest, its diff ID and its content), so a binary is never held in memory.
func layer(entries []entry) (v1.Layer, error) {
	opener := func() (io.ReadCloser, error) {
		pr, pw := io.Pipe()
		go func() { pw.CloseWithError(writeTar(pw, entries)) }()
		return pr, nil
	}
	l, err := tarball.LayerFromOpener(opener, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, fmt.Errorf("making a layer: %w", err)
	}
	return l, nil
}
