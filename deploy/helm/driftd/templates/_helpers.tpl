{{/* The chart's name, or nameOverride. */}}
{{- define "driftd.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The objects' name: the release's, prefixed with the chart's unless it contains it. */}}
{{- define "driftd.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "driftd.namespace" -}}
{{- default .Release.Namespace .Values.namespaceOverride }}
{{- end }}

{{- define "driftd.selectorLabels" -}}
app.kubernetes.io/name: {{ include "driftd.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "driftd.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "driftd.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/component: monitor
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{- define "driftd.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "driftd.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* The ConfigMap or Secret holding driftd.yml and its manifests. */}}
{{- define "driftd.configMapName" -}}
{{- coalesce .Values.existingConfigMap .Values.configExistingSecretName (include "driftd.fullname" .) }}
{{- end }}

{{/* "true" when the configuration is in a Secret. */}}
{{- define "driftd.configIsSecret" -}}
{{- if and (not .Values.existingConfigMap) (or .Values.configExistingSecretName .Values.secretConfig) }}true{{ end }}
{{- end }}

{{- define "driftd.image" -}}
{{- $tag := default (printf "v%s" .Chart.AppVersion) .Values.image.tag }}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository $tag }}
{{- end }}
{{- end }}

{{/*
The path driftd serves under, as driftd computes it (cmd/driftd, prefix):
web.routePrefix, else the path of web.externalURL; "/x" without a
trailing slash, or "" for the root.
*/}}
{{- define "driftd.routePrefix" -}}
{{- $p := .Values.web.routePrefix }}
{{- if and (not $p) .Values.web.externalURL }}
{{- $p = (urlParse .Values.web.externalURL).path }}
{{- end }}
{{- $p = trimAll "/" $p }}
{{- if $p }}{{ printf "/%s" $p }}{{ end }}
{{- end }}

{{/* The web configuration the chart writes (web.config, with web.tls's). */}}
{{- define "driftd.webConfig" -}}
{{- $c := deepCopy .Values.web.config }}
{{- if and .Values.web.tls.secretName (not (hasKey $c "tls_server_config")) }}
{{- $_ := set $c "tls_server_config" (dict "cert_file" "/etc/driftd-web-tls/tls.crt" "key_file" "/etc/driftd-web-tls/tls.key") }}
{{- end }}
{{- toYaml $c }}
{{- end }}

{{/* "true" when driftd runs with --web.config.file. */}}
{{- define "driftd.webConfigEnabled" -}}
{{- if or .Values.web.existingSecret .Values.web.config .Values.web.tls.secretName }}true{{ end }}
{{- end }}

{{/* The Secret holding web.yml. */}}
{{- define "driftd.webSecretName" -}}
{{- default (printf "%s-web" (include "driftd.fullname" .)) .Values.web.existingSecret }}
{{- end }}

{{/* "true" when driftd serves HTTPS. */}}
{{- define "driftd.webTLS" -}}
{{- if or .Values.web.tls.enabled .Values.web.tls.secretName (and (not .Values.web.existingSecret) (hasKey .Values.web.config "tls_server_config")) }}true{{ end }}
{{- end }}

{{/* The scheme of the probes: HTTP or HTTPS. */}}
{{- define "driftd.probeScheme" -}}
{{- if include "driftd.webTLS" . }}HTTPS{{ else }}HTTP{{ end }}
{{- end }}

{{/*
The extra labels of a monitoring object: its labels, with release: <the
release's name> (what kube-prometheus-stack selects on) when releaseLabel
is set and labels has no release of its own. Call with (list . values).
*/}}
{{- define "driftd.monitoringLabels" -}}
{{- $root := index . 0 }}
{{- $v := index . 1 }}
{{- $l := deepCopy (default (dict) $v.labels) }}
{{- if $v.releaseLabel }}
{{- $_ := set $l "release" (get $l "release" | default $root.Release.Name) }}
{{- end }}
{{- with $l }}
{{- toYaml . }}
{{- end }}
{{- end }}
