package chartserver

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"

	"helm.sh/helm/v4/pkg/chart/loader/archive"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
)

// Package builds a chart archive (.tgz) from chart files keyed by their path
// relative to the chart root ("Chart.yaml", "templates/deployment.yaml", ...).
// The chart is loaded and saved with the Helm SDK, so an archive that Package
// accepts is one Helm accepts.
func Package(files map[string][]byte) ([]byte, error) {
	c, err := load(files)
	if err != nil {
		return nil, err
	}
	return save(c)
}

// PackageFS is Package for a chart directory held in an fs.FS (root "." is the
// chart root).
func PackageFS(fsys fs.FS) ([]byte, error) {
	files, err := readFS(fsys)
	if err != nil {
		return nil, err
	}
	return Package(files)
}

// Metadata returns the Chart.yaml metadata of a chart archive.
func Metadata(tgz []byte) (*chart.Metadata, error) {
	c, err := loader.LoadArchive(bytes.NewReader(tgz))
	if err != nil {
		return nil, fmt.Errorf("load chart archive: %w", err)
	}
	return c.Metadata, nil
}

func load(files map[string][]byte) (*chart.Chart, error) {
	buffered := make([]*archive.BufferedFile, 0, len(files))
	for name, data := range files {
		buffered = append(buffered, &archive.BufferedFile{Name: path.Clean(filepath.ToSlash(name)), Data: data})
	}
	c, err := loader.LoadFiles(buffered)
	if err != nil {
		return nil, fmt.Errorf("load chart files: %w", err)
	}
	return c, nil
}

// save writes the chart with chartutil.Save, which only writes to a directory,
// and reads the archive back.
func save(c *chart.Chart) ([]byte, error) {
	dir, err := os.MkdirTemp("", "holdfast-chart-")
	if err != nil {
		return nil, fmt.Errorf("package chart: %w", err)
	}
	defer os.RemoveAll(dir)
	name, err := chartutil.Save(c, dir)
	if err != nil {
		return nil, fmt.Errorf("package chart %s: %w", c.Name(), err)
	}
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("package chart %s: %w", c.Name(), err)
	}
	return data, nil
}

func readFS(fsys fs.FS) (map[string][]byte, error) {
	files := map[string][]byte{}
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		files[p] = data
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read chart files: %w", err)
	}
	return files, nil
}
