{{/* hello.fullname is the name shared by every object of the release. */}}
{{- define "hello.fullname" -}}
{{- printf "%s-hello" .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "hello.labels" -}}
app.kubernetes.io/name: hello
app.kubernetes.io/instance: {{ .Release.Name }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}
