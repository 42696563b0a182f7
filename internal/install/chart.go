package install

import (
	"bytes"
	"fmt"
	"io/fs"
	"path"

	"helm.sh/helm/v4/pkg/chart/loader/archive"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/ignore"

	"holdfast.dev/holdfast/charts"
)

// Chart loads the embedded holdfast chart, the hub's.
func Chart() (*chart.Chart, error) {
	return embedded(charts.Holdfast, charts.HoldfastDir)
}

// AgentChart loads the embedded holdfast-agent chart, a Pull cluster's agent.
func AgentChart() (*chart.Chart, error) {
	return embedded(charts.Agent, charts.AgentDir)
}

// embedded loads the chart in directory dir of fsys.
func embedded(fsys fs.FS, dir string) (*chart.Chart, error) {
	sub, err := fs.Sub(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("opening the embedded chart %s: %w", dir, err)
	}
	return LoadFS(sub)
}

// LoadFS loads a chart from the root of fsys as helm loads a chart directory: files that
// .helmignore names are left out.
func LoadFS(fsys fs.FS) (*chart.Chart, error) {
	rules := ignore.Empty()
	if data, err := fs.ReadFile(fsys, ignore.HelmIgnore); err == nil {
		if rules, err = ignore.Parse(bytes.NewReader(data)); err != nil {
			return nil, fmt.Errorf("parsing %s: %w", ignore.HelmIgnore, err)
		}
	}
	rules.AddDefaults()
	var files []*archive.BufferedFile
	err := fs.WalkDir(fsys, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || name == "." {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if rules.Ignore(name, fi) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			return err
		}
		files = append(files, &archive.BufferedFile{Name: path.Clean(name), Data: data})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading the chart's files: %w", err)
	}
	ch, err := loader.LoadFiles(files)
	if err != nil {
		return nil, fmt.Errorf("loading the chart: %w", err)
	}
	return ch, nil
}
