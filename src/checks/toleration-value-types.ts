import type { HelmRelease } from '../facts/types.js'
import {
  helmPath,
  helmSetValue,
  lintHelmValues,
  yamlSnippet,
  type KeyPath,
  type LintIssue,
} from '../lint/values.js'
import { helmUpgradeCommand } from './lib/install.js'
import { needHelmRelease } from './lib/facts.js'
import type { Check, Finding, Fix } from './types.js'

export const tolerationValueTypes: Check = {
  meta: {
    id: 'toleration-value-types',
    title: 'Toleration, annotation and label values in the Helm values are strings',
    category: 'helm',
    severity: 'error',
    docs: 'Kubernetes wants toleration values, annotations, labels and nodeSelector values as strings; `--set x=true` or an unquoted true/1 in values.yaml makes them booleans/numbers and the API server rejects the Deployment or ServiceAccount. `karpctl lint` checks values files and Terraform before install.',
  },
  run(facts) {
    const release = needHelmRelease(facts)
    const subject = `${release.namespace}/${release.name}`
    const issues = releaseIssues(release)
    if (issues.length === 0) {
      return [
        {
          status: 'pass',
          subject,
          message: `every toleration value, annotation, label and nodeSelector value in the Helm values of ${subject} is a string`,
        },
      ]
    }
    return issues.map((issue): Finding => ({
      status: 'fail',
      subject,
      message: `${issue.path} = ${JSON.stringify(issue.value)} (${issue.valueType}) in ${issue.source} of ${subject}: Kubernetes needs a string, so the API server rejects the object`,
      evidence: { path: issue.path, value: issue.value, valueType: issue.valueType, source: issue.source },
      fix: fixFor(release, issue),
    }))
  },
}

/** User values first (what the user typed); computed values add only paths the user values lack. */
function releaseIssues(release: HelmRelease): LintIssue[] {
  const user = lintHelmValues(release.values, 'the Helm values (helm get values)')
  const seen = new Set(user.map((i) => i.path))
  const computed = lintHelmValues(release.computedValues, 'the computed Helm values').filter(
    (i) => !seen.has(i.path),
  )
  return [...user, ...computed]
}

function fixFor(release: HelmRelease, issue: LintIssue): Fix {
  if (issue.keyPath[0] === 'tolerations') return tolerationsFix(release, issue)
  const nested = issue.keyPath.reduceRight<unknown>((acc, seg) => ({ [seg]: acc }), issue.stringValue)
  return {
    summary: `pass ${issue.path} as a string (--set-string, or quote it in your values file)`,
    commands: [
      helmUpgradeCommand(
        release,
        release.chartVersion,
        ` --set-string ${quote(`${issue.path}=${helmSetValue(issue.stringValue)}`)}`,
      ),
    ],
    snippet: { language: 'yaml', text: yamlSnippet(nested) },
  }
}

/**
 * Helm replaces lists whole (with --reuse-values the new list wins), so a lone
 * `--set-string tolerations[1].value=...` would drop every other toleration and field: re-specify the
 * full list, strings with --set-string and tolerationSeconds (an integer) with --set.
 */
function tolerationsFix(release: HelmRelease, issue: LintIssue): Fix {
  const current = release.computedValues.tolerations ?? release.values.tolerations
  const list = Array.isArray(current) ? current.map(stringifyToleration) : []
  const strings: string[] = []
  const numbers: string[] = []
  list.forEach((t, i) => {
    for (const [k, v] of Object.entries(t)) {
      const path = helmPath(['tolerations', i, k] as KeyPath)
      if (k === 'tolerationSeconds' && typeof v === 'number') numbers.push(`${path}=${v}`)
      else if (v !== null && v !== undefined) strings.push(`${path}=${helmSetValue(String(v))}`)
    }
  })
  const args = [
    strings.length > 0 ? ` --set-string ${quote(strings.join(','))}` : '',
    numbers.length > 0 ? ` --set ${quote(numbers.join(','))}` : '',
  ].join('')
  return {
    summary: `make ${issue.path} the string ${JSON.stringify(issue.stringValue)}: re-specify the whole tolerations list (Helm replaces lists), or put the snippet in your values file`,
    commands: [helmUpgradeCommand(release, release.chartVersion, args)],
    snippet: { language: 'yaml', text: yamlSnippet({ tolerations: list }) },
  }
}

/** Every toleration field a string, except tolerationSeconds, which Kubernetes types as an integer. */
function stringifyToleration(t: unknown): Record<string, unknown> {
  if (t === null || typeof t !== 'object' || Array.isArray(t)) return {}
  return Object.fromEntries(
    Object.entries(t as Record<string, unknown>).map(([k, v]) => [
      k,
      k === 'tolerationSeconds' || v === null || typeof v === 'object' ? v : String(v),
    ]),
  )
}

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`
