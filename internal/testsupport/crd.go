package testsupport

import (
	"fmt"
	"strings"
)

// CRD is the YAML of a CustomResourceDefinition for tests: a namespaced kind in group, served
// and stored at v1, whose objects have an integer spec.size.
func CRD(group, kind string) string {
	singular := strings.ToLower(kind)
	return fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: %[3]ss.%[1]s
spec:
  group: %[1]s
  scope: Namespaced
  names: {plural: %[3]ss, singular: %[3]s, kind: %[2]s, listKind: %[2]sList}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer}
`, group, kind, singular)
}
