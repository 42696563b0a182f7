package render_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"holdfast.dev/holdfast/internal/render"
)

// A service whose manifests use the target cluster's labels through values.
func ExampleRender() {
	res, err := render.Render(context.Background(), render.Request{
		Service:         "web",
		Cluster:         render.Cluster{Name: "prod-eu-1", Labels: map[string]string{"region": "eu-west"}},
		TargetNamespace: "shop",
		TemplateValues:  "region: {{ .Cluster.Labels.region }}\nreplicas: 1\n",
		ServiceValues:   "replicas: 3\n",
		Source: render.Source{GoTemplate: true, Inline: `apiVersion: v1
kind: ConfigMap
metadata:
  name: web-settings
data:
  region: {{ .Values.region }}
  replicas: "{{ .Values.replicas }}"
`},
	}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, o := range res.Objects {
		fmt.Println(o.GetKind(), o.GetName(), o.Object["data"])
	}
	// Output: ConfigMap web-settings map[region:eu-west replicas:3]
}

// Errors name the service, the document and what to fix; Transient tells
// the caller whether to retry.
func ExampleTransient() {
	_, err := render.Render(context.Background(), render.Request{
		Service: "web",
		Source:  render.Source{Inline: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  generateName: web-\n"},
	}, nil)
	var re *render.Error
	if errors.As(err, &re) {
		fmt.Println(re.Reason, render.Transient(err))
		fmt.Println(err)
	}
	// Output:
	// MissingKindOrName false
	// service "web": inline manifests, document 1 at line 1: v1 ConfigMap uses metadata.generateName; Holdfast needs a stable metadata.name to track the object, so set one
}

// A template that would build a gigabyte string fails at once, naming the
// function and the limit; the error is permanent.
func ExampleLimits() {
	_, err := render.Render(context.Background(), render.Request{
		Service: "web",
		Limits:  render.Limits{Timeout: 5 * time.Second}, // the others keep their defaults
		Source: render.Source{GoTemplate: true, Inline: `apiVersion: v1
kind: ConfigMap
metadata: {name: big}
data:
  x: {{ repeat 1000000000 "x" }}
`},
	}, nil)
	fmt.Println(render.ReasonOf(err), render.Transient(err))
	fmt.Println(err)
	// Output:
	// RenderLimitExceeded false
	// service "web": inline manifests: stopped at line 5: repeat would return more than 1 MiB, the limit for one value; make its input or count smaller
}
