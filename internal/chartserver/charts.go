package chartserver

import (
	"embed"
	"fmt"
	"io/fs"
)

//go:embed all:charts
var charts embed.FS

// Names of the embedded sample charts.
const (
	// HelloChartName is a Deployment, a Service and a ConfigMap with a values.schema.json.
	HelloChartName = "hello"
	// GeneratedChartName is a Secret and a ConfigMap whose values the templates generate
	// (randAlphaNum, uuidv4, genCA, genPrivateKey): every render differs, as with many
	// published charts. Its value greeting is copied into the ConfigMap.
	GeneratedChartName = "generated"
)

// HelloFiles returns the files of the embedded sample chart "hello", keyed by
// their path relative to the chart root. Callers may change them (for example
// a template) before calling Package.
func HelloFiles() (map[string][]byte, error) { return embeddedFiles(HelloChartName) }

// Hello packages the embedded sample chart "hello" with the given chart
// version ("" keeps the version in its Chart.yaml, 0.1.0), so a test can serve
// several versions of the same chart.
func Hello(version string) ([]byte, error) { return embedded(HelloChartName, version) }

// Generated packages the embedded sample chart "generated" with the given
// chart version ("" keeps 0.1.0).
func Generated(version string) ([]byte, error) { return embedded(GeneratedChartName, version) }

func embeddedFiles(name string) (map[string][]byte, error) {
	sub, err := fs.Sub(charts, "charts/"+name)
	if err != nil {
		return nil, fmt.Errorf("embedded chart %s: %w", name, err)
	}
	return readFS(sub)
}

func embedded(name, version string) ([]byte, error) {
	files, err := embeddedFiles(name)
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
