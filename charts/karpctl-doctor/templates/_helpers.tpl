{{- define "karpctl-doctor.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "karpctl-doctor.serviceAccountName" -}}
{{- default (include "karpctl-doctor.fullname" .) .Values.serviceAccount.name -}}
{{- end -}}

{{- define "karpctl-doctor.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "karpctl-doctor.labels" -}}
{{ include "karpctl-doctor.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- /* --interval in seconds (30s, 5m, 1h, 1h30m), for the staleness alert. */ -}}
{{- define "karpctl-doctor.intervalSeconds" -}}
{{- $s := 0 -}}
{{- $v := toString .Values.interval -}}
{{- range $part := regexFindAll "[0-9]+[hms]" $v -1 -}}
{{- $n := int (trimSuffix "h" (trimSuffix "m" (trimSuffix "s" $part))) -}}
{{- if hasSuffix "h" $part }}{{ $s = add $s (mul $n 3600) }}{{ else if hasSuffix "m" $part }}{{ $s = add $s (mul $n 60) }}{{ else }}{{ $s = add $s $n }}{{ end -}}
{{- end -}}
{{- $s -}}
{{- end -}}
