// Package crd embeds Holdfast's generated CustomResourceDefinitions, so that the binary can
// install them into a hub (the sandbox and demo do) without the repository at hand.
package crd

import (
	"bytes"
	"embed"
	"fmt"
	"io"
	"io/fs"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

//go:embed bases/*.yaml
var bases embed.FS

// CRDs returns the CustomResourceDefinitions in config/crd/bases.
func CRDs() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	files, err := fs.Glob(bases, "bases/*.yaml")
	if err != nil {
		return nil, fmt.Errorf("listing embedded CRDs: %w", err)
	}
	var out []*apiextensionsv1.CustomResourceDefinition
	for _, f := range files {
		data, err := bases.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("reading embedded %s: %w", f, err)
		}
		dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
		for {
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if err := dec.Decode(crd); err != nil {
				if err == io.EOF {
					break
				}
				return nil, fmt.Errorf("decoding embedded %s: %w", f, err)
			}
			if crd.Name != "" {
				out = append(out, crd)
			}
		}
	}
	return out, nil
}
