{{/* The chart's name, or nameOverride: the pods' app.kubernetes.io/name is it plus -webhook or -status. */}}
{{- define "metalsynth.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 41 | trimSuffix "-" }}
{{- end }}

{{/*
The prefix of every name: fullnameOverride, else the release's name, followed by the chart's unless it
holds it already. 41 characters at most: the longest suffix, -webhook-critical-pods, keeps names within 63.
*/}}
{{- define "metalsynth.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 41 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 41 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 41 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* Helm's standard labels, on every object of the chart. */}}
{{- define "metalsynth.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/* The image: image.tag, or the chart's appVersion. */}}
{{- define "metalsynth.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end }}
