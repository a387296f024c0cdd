{{- define "parity.labels" -}}
app.kubernetes.io/name: parity
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: parity
helm.sh/chart: {{ .Chart.Name }}-{{ .Chart.Version }}
{{- end -}}
{{- define "parity.selector" -}}
app.kubernetes.io/name: parity
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}
