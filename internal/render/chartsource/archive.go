package chartsource

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"

	"holdfast.dev/holdfast/internal/render"
)

const (
	// DefaultMaxExtractedSize is the default Options.MaxExtractedSize: the most an artifact
	// may hold once uncompressed.
	DefaultMaxExtractedSize int64 = 128 << 20
	// DefaultMaxArtifactFiles is the default Options.MaxArtifactFiles.
	DefaultMaxArtifactFiles = 10000
)

// extractLimits bound what an artifact may unpack to.
type extractLimits struct {
	bytes int64
	files int
}

func (o Options) extractLimits() extractLimits {
	l := extractLimits{bytes: o.MaxExtractedSize, files: o.MaxArtifactFiles}
	if l.bytes <= 0 {
		l.bytes = DefaultMaxExtractedSize
	}
	if l.files <= 0 {
		l.files = DefaultMaxArtifactFiles
	}
	return l
}

// extract unpacks a tar.gz held in memory. Only regular files and directories are accepted:
// a symlink, hard link or device is refused, as is a name that is absolute or leaves the
// root, since what the archive holds is rendered, never written to disk, and a link could
// only point outside what was verified. The uncompressed size and the file count are bounded,
// so a small archive cannot unpack to gigabytes.
func extract(ref string, data []byte, limits extractLimits) (map[string][]byte, error) {
	invalidArchive := func(msg string) error {
		return &render.Error{Reason: render.ReasonInvalidArtifact, Object: ref, Message: msg}
	}
	gz, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, invalidArchive("the artifact is not a gzip-compressed tar archive: " + err.Error())
	}
	defer gz.Close()
	tr := tar.NewReader(gz)
	files := map[string][]byte{}
	var total int64
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, invalidArchive("the artifact is not a valid tar.gz archive: " + err.Error())
		}
		name := strings.TrimPrefix(hdr.Name, "./")
		clean := path.Clean(name)
		if name == "" || clean == "." && hdr.Typeflag == tar.TypeDir {
			continue
		}
		if path.IsAbs(name) || clean == ".." || strings.HasPrefix(clean, "../") || strings.Contains(name, "\\") {
			return nil, invalidArchive(fmt.Sprintf("entry %q leaves the archive's root; it is refused", hdr.Name))
		}
		switch hdr.Typeflag {
		case tar.TypeDir:
			continue
		case tar.TypeReg:
		case tar.TypeSymlink, tar.TypeLink:
			return nil, invalidArchive(fmt.Sprintf("entry %q is a link; artifacts must hold regular files only", hdr.Name))
		default:
			return nil, invalidArchive(fmt.Sprintf("entry %q is not a regular file or directory (tar type %q)", hdr.Name, hdr.Typeflag))
		}
		if len(files) >= limits.files {
			return nil, invalidArchive(fmt.Sprintf("the artifact holds more than %d files, the limit", limits.files))
		}
		if hdr.Size < 0 || hdr.Size > limits.bytes-total {
			return nil, invalidArchive(fmt.Sprintf("the artifact unpacks to more than %s, the limit; make it smaller or split it", byteSize(limits.bytes)))
		}
		content, err := io.ReadAll(io.LimitReader(tr, hdr.Size))
		if err != nil {
			return nil, invalidArchive(fmt.Sprintf("entry %q cannot be read: %v", hdr.Name, err))
		}
		total += int64(len(content))
		if _, dup := files[clean]; dup {
			return nil, invalidArchive(fmt.Sprintf("entry %q is in the archive twice", clean))
		}
		files[clean] = content
	}
	return files, nil
}
