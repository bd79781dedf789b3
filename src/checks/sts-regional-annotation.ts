// With IRSA, EKS's pod identity webhook reads `eks.amazonaws.com/sts-regional-endpoints` from the
// ServiceAccount (strconv.ParseBool) and, when true, injects AWS_STS_REGIONAL_ENDPOINTS=regional into
// the pods. Is it needed? Not for current Karpenter: from v1.1 it is built on the AWS SDK for Go v2
// (karpenter-provider-aws go.mod, Nov 2024), which always resolves the regional STS endpoint. v0.x and
// v1.0.x use aws-sdk-go v1, which defaults to the global endpoint (sts.amazonaws.com, a us-east-1
// dependency): there the annotation is advisable, but still not required.
// So absence passes; what fails is the classic breakage: `--set ...=true` makes the value a boolean,
// and Helm cannot build the ServiceAccount ("unable to decode: json: cannot unmarshal bool into Go
// struct field ObjectMeta.metadata.annotations of type string", seen with helm 3.22 against a real
// kube-apiserver in test/e2e), so the upgrade fails and the annotation never lands.
import type { Facts, HelmRelease } from '../facts/types.js'
import { helmUpgradeCommand, withRenderedNote } from './lib/install.js'
import { describeFailure, isRendered, needRelease, releaseVersion, skip, valueAt } from './lib/facts.js'
import { controllerServiceAccount } from './lib/trust.js'
import { helmPath, yamlSnippet, type KeyPath } from '../lint/values.js'
import type { Check, Finding, Fix } from './types.js'

export const STS_ANNOTATION = 'eks.amazonaws.com/sts-regional-endpoints'

/** Where Helm values can put an annotation on the controller ServiceAccount. */
const VALUE_PATHS: KeyPath[] = [
  ['serviceAccount', 'annotations', STS_ANNOTATION],
  ['additionalAnnotations', STS_ANNOTATION],
]

interface Occurrence {
  /** Human description of where the value was found. */
  where: string
  /** The Helm values path, for values occurrences. */
  keyPath?: KeyPath
  value: unknown
}

type Verdict = 'ok' | 'nonCanonical' | 'invalid' | 'wrongType'

export const stsRegionalAnnotation: Check = {
  meta: {
    id: 'sts-regional-annotation',
    title: 'STS regional-endpoint annotation is the string "true" where set',
    category: 'helm',
    severity: 'error',
    docs: 'With IRSA, eks.amazonaws.com/sts-regional-endpoints on the controller ServiceAccount must be the string "true" (or "false"): a boolean from `--set` gets the ServiceAccount rejected. Not needed with Pod Identity or with SDKs that default to regional STS.',
  },
  run(facts) {
    const release = needRelease(facts)
    if (facts.iam.controllerIdentity === 'pod-identity') {
      skip(
        'the controller uses EKS Pod Identity: the STS endpoint annotation only affects IRSA, so it is not needed',
      )
    }
    if (facts.iam.controllerIdentity !== 'irsa') {
      skip(
        'the controller identity is not IRSA (no eks.amazonaws.com/role-arn found): the annotation only matters with IRSA',
      )
    }
    const sa = controllerServiceAccount(facts, release)
    const subject = `${sa.namespace}/${sa.name}`
    const inValues = valuesOccurrences(release)
    const rendered = release.renderedServiceAccount?.annotations[STS_ANNOTATION]
    const findings: Finding[] = []

    for (const occ of inValues) {
      const f = judgeValue(facts, release, occ, subject)
      if (f) findings.push(f)
    }
    // A wrong type explains everything downstream (rendered manifest, rejected ServiceAccount): report it once.
    const typeBroken = inValues.some((o) => verdict(o.value) === 'wrongType')
    if (!typeBroken && rendered !== undefined && typeof rendered !== 'string') {
      findings.push(
        typeFailure(
          facts,
          release,
          { where: 'the ServiceAccount manifest the release rendered', value: rendered },
          subject,
        ),
      )
    }

    const live = liveAnnotation(facts, subject, findings)
    if (live === 'unreadable') return findings
    if (live.value !== undefined) {
      const f = judgeValue(
        facts,
        release,
        { where: `the live ServiceAccount ${subject}`, value: live.value },
        subject,
      )
      if (f) findings.push(f)
      else {
        const drift = driftFinding(facts, release, subject, inValues, live.value)
        if (drift) findings.push(drift)
      }
    }
    const declared = inValues.length > 0 || rendered !== undefined
    if (declared && live.value === undefined && !typeBroken) {
      findings.push(notApplied(facts, release, subject, live.exists, inValues))
    }
    if (findings.length > 0) return withRenderedNote(release, findings)
    return [passFinding(release, subject, live.value, declared)]
  },
}

/** Values say one thing, the live ServiceAccount another: the next `helm upgrade` will flip it. */
function driftFinding(
  facts: Facts,
  release: HelmRelease,
  subject: string,
  inValues: Occurrence[],
  live: string,
): Finding | null {
  const declared = inValues.find((o) => typeof o.value === 'string' && o.value !== live)
  if (!declared) return null
  return {
    status: 'warn',
    subject,
    message: `${STS_ANNOTATION} is ${JSON.stringify(live)} on the live ServiceAccount ${subject} but ${JSON.stringify(declared.value)} in ${declared.where}: the next helm upgrade changes it`,
    evidence: {
      live,
      values: declared.value,
      path: declared.keyPath ? helmPath(declared.keyPath) : undefined,
    },
    fix: stringFix(facts, release, subject, declared.keyPath),
  }
}

/** Values occurrences: user values first; computed values only add what the user values do not hold. */
function valuesOccurrences(release: HelmRelease): Occurrence[] {
  const out: Occurrence[] = []
  // No Helm release: no values were stored; the live ServiceAccount is the only word.
  if (isRendered(release)) return out
  for (const keyPath of VALUE_PATHS) {
    const user = at(release.values, keyPath)
    const computed = at(release.computedValues, keyPath)
    if (user !== undefined) out.push({ where: 'the Helm values (helm get values)', keyPath, value: user })
    else if (computed !== undefined) out.push({ where: 'the computed Helm values', keyPath, value: computed })
  }
  return out.filter((o) => o.value !== null)
}

function at(values: Record<string, unknown>, keyPath: KeyPath): unknown {
  const parent = valueAt(values, keyPath.slice(0, -1).join('.'))
  if (parent === null || typeof parent !== 'object') return undefined
  return (parent as Record<string, unknown>)[keyPath[keyPath.length - 1] as string]
}

/** strconv.ParseBool, which the webhook uses: anything else is silently ignored. */
function verdict(value: unknown): Verdict {
  if (typeof value !== 'string') return 'wrongType'
  if (value === 'true' || value === 'false') return 'ok'
  if (['1', 't', 'T', 'TRUE', 'True', '0', 'f', 'F', 'FALSE', 'False'].includes(value)) return 'nonCanonical'
  return 'invalid'
}

function judgeValue(facts: Facts, release: HelmRelease, occ: Occurrence, subject: string): Finding | null {
  const v = verdict(occ.value)
  if (v === 'ok') return null
  if (v === 'wrongType') return typeFailure(facts, release, occ, subject)
  const fix = stringFix(facts, release, subject, occ.keyPath)
  if (v === 'nonCanonical') {
    return {
      status: 'warn',
      subject,
      message: `${STS_ANNOTATION} is ${JSON.stringify(occ.value)} in ${occ.where}: the webhook accepts it (strconv.ParseBool), but write "true" or "false"`,
      evidence: { where: occ.where, value: occ.value },
      fix,
    }
  }
  return {
    status: 'fail',
    subject,
    message: `${STS_ANNOTATION} is ${JSON.stringify(occ.value)} in ${occ.where}: not "true"/"false", so the pod identity webhook ignores it`,
    evidence: { where: occ.where, value: occ.value },
    fix,
  }
}

function typeFailure(facts: Facts, release: HelmRelease, occ: Occurrence, subject: string): Finding {
  const type = occ.value === null ? 'null' : typeof occ.value
  // Go's encoding/json names the JSON types: bool, number, object, array.
  const goType = type === 'boolean' ? 'bool' : Array.isArray(occ.value) ? 'array' : type
  return {
    status: 'fail',
    subject,
    message: `${STS_ANNOTATION} is the ${type} ${JSON.stringify(occ.value)} in ${occ.where}, not the string "true": Helm cannot build the ServiceAccount ("cannot unmarshal ${goType} into Go struct field ObjectMeta.metadata.annotations of type string"), so the upgrade fails and the annotation never lands`,
    evidence: {
      where: occ.where,
      path: occ.keyPath ? helmPath(occ.keyPath) : undefined,
      value: occ.value,
      valueType: type,
    },
    fix: stringFix(facts, release, subject, occ.keyPath),
  }
}

/** Reads the live ServiceAccount's annotation; a failed read adds an `unknown` and stops the live part. */
function liveAnnotation(
  facts: Facts,
  subject: string,
  findings: Finding[],
): { exists: boolean; value: string | undefined } | 'unreadable' {
  const read = facts.kube.serviceAccount
  if (!read.ok) {
    findings.push({
      status: 'unknown',
      subject,
      message: `live ServiceAccount ${subject}: ${describeFailure(read.error)}`,
      evidence: { read: read.error.read },
    })
    return 'unreadable'
  }
  if (!read.value) return { exists: false, value: undefined }
  return { exists: true, value: read.value.metadata.annotations?.[STS_ANNOTATION] }
}

function notApplied(
  facts: Facts,
  release: HelmRelease,
  subject: string,
  saExists: boolean,
  occ: Occurrence[],
): Finding {
  const external = valueAt(release.computedValues, 'serviceAccount.create') === false
  const reason = !saExists
    ? `the ServiceAccount ${subject} does not exist`
    : external
      ? `serviceAccount.create is false, so Helm does not manage ${subject}`
      : 'the release did not apply it (a rejected upgrade, or the ServiceAccount was replaced outside Helm)'
  return {
    status: 'fail',
    subject,
    message: `${STS_ANNOTATION} is set in the Helm values but missing on the live ServiceAccount ${subject}: ${reason}`,
    code: 'missing-on-live',
    evidence: {
      values: occ.map((o) => ({
        where: o.where,
        path: o.keyPath ? helmPath(o.keyPath) : undefined,
        value: o.value,
      })),
      liveServiceAccount: saExists ? subject : null,
    },
    fix:
      external && saExists
        ? annotateFix(facts, release, subject)
        : stringFix(facts, release, subject, occ[0]?.keyPath),
  }
}

function passFinding(
  release: HelmRelease,
  subject: string,
  live: string | undefined,
  declared: boolean,
): Finding {
  if (live !== undefined) {
    const where = declared
      ? `in the Helm values and on ${subject}`
      : `on ${subject} (set outside the Helm values)`
    return {
      status: 'pass',
      subject,
      message:
        live === 'false'
          ? `${STS_ANNOTATION} is the string "false" ${where}: the webhook injects no regional override (AWS SDK for Go v2 uses regional STS anyway)`
          : `${STS_ANNOTATION} is the string "true" ${where}: the webhook injects AWS_STS_REGIONAL_ENDPOINTS=regional`,
      evidence: { value: live, inHelmValues: declared },
    }
  }
  const v = releaseVersion(release)
  const sdkV1 = v !== null && (v.major === 0 || (v.major === 1 && v.minor === 0))
  return {
    status: 'pass',
    subject,
    message: sdkV1
      ? `${STS_ANNOTATION} is not set on ${subject}: not required; Karpenter ${v?.raw} (aws-sdk-go v1) then uses the global STS endpoint, so setting it to the string "true" is advisable`
      : `${STS_ANNOTATION} is not set on ${subject}: not needed, Karpenter's AWS SDK for Go v2 uses the regional STS endpoint by default`,
    evidence: { annotation: STS_ANNOTATION, set: false, chartVersion: release.chartVersion },
  }
}

function stringFix(
  facts: Facts,
  release: HelmRelease,
  subject: string,
  keyPath: KeyPath = VALUE_PATHS[0] as KeyPath,
): Fix {
  if (isRendered(release)) return annotateFix(facts, release, subject)
  const [ns, name] = subject.split('/') as [string, string]
  const nested = keyPath.reduceRight<unknown>((acc, seg) => ({ [seg]: acc }), 'true')
  return {
    summary: `set the annotation as a string (--set-string, or quote it in values.yaml), then restart the controller so the webhook injects AWS_STS_REGIONAL_ENDPOINTS`,
    commands: [
      helmUpgradeCommand(release, release.chartVersion, ` --set-string '${helmPath(keyPath)}=true'`),
      `kubectl rollout restart deployment/${deploymentName(facts, release)} -n ${ns}`,
      `kubectl get serviceaccount ${name} -n ${ns} -o jsonpath='{.metadata.annotations.eks\\.amazonaws\\.com/sts-regional-endpoints}'`,
    ],
    snippet: { language: 'yaml', text: yamlSnippet(nested) },
  }
}

/** serviceAccount.create=false: the ServiceAccount is the user's, so annotate it directly. */
function annotateFix(facts: Facts, release: HelmRelease, subject: string): Fix {
  const [ns, name] = subject.split('/') as [string, string]
  return {
    summary: `annotate the ServiceAccount ${subject} yourself (${isRendered(release) ? 'there is no Helm release' : 'Helm does not manage it'}), then restart the controller`,
    commands: [
      `kubectl annotate serviceaccount ${name} -n ${ns} ${STS_ANNOTATION}=true --overwrite`,
      `kubectl rollout restart deployment/${deploymentName(facts, release)} -n ${ns}`,
    ],
  }
}

function deploymentName(facts: Facts, release: HelmRelease): string {
  return facts.kube.deployment.ok && facts.kube.deployment.value
    ? facts.kube.deployment.value.metadata.name
    : release.name
}
