package chartserver

import (
	"embed"
	"fmt"
	"io/fs"
)

//go:embed all:charts
var charts embed.FS

// HelloChartName is the name of the embedded sample chart.
const HelloChartName = "hello"

// HelloFiles returns the files of the embedded sample chart "hello", keyed by
// their path relative to the chart root. Callers may change them (for example
// a template) before calling Package.
func HelloFiles() (map[string][]byte, error) {
	sub, err := fs.Sub(charts, "charts/"+HelloChartName)
	if err != nil {
		return nil, fmt.Errorf("embedded chart %s: %w", HelloChartName, err)
	}
	return readFS(sub)
}

// Hello packages the embedded sample chart "hello" with the given chart
// version ("" keeps the version in its Chart.yaml, 0.1.0), so a test can serve
// several versions of the same chart.
func Hello(version string) ([]byte, error) {
	files, err := HelloFiles()
	if err != nil {
		return nil, err
	}
	c, err := load(files)
	if err != nil {
		return nil, err
	}
	if version != "" {
		c.Metadata.Version = version
	}
	return save(c)
}
