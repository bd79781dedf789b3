// The permissions doctor needs are derived from the reads the facts layer makes: every AWS call and
// every Kubernetes API path written in src/facts/ must have its IAM action / RBAC rule in
// src/desired/doctor-reads.ts, and every entry there must still be used. The README's policy and the
// chart's ClusterRole are that same list. A new read added without its permission fails here.
import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { parse } from 'yaml'
import { ENDPOINT_PREFIX } from '../../../src/context/aws.js'
import {
  DOCTOR_IAM_ACTIONS,
  DOCTOR_KUBE_READS,
  DOCTOR_SERVE_WRITES,
  doctorIamPolicy,
  type RbacRule,
} from '../../../src/desired/doctor-reads.js'

const ROOT = join(import.meta.dirname, '../../..')
const factsSources = readdirSync(join(ROOT, 'src/facts'))
  .filter((f) => f.endsWith('.ts'))
  .map((f) => ({ file: f, text: readFileSync(join(ROOT, 'src/facts', f), 'utf8') }))

/** `aws.call<…>('svc', 'Op', …)` and `aws.all<…>('svc', 'Op', …)`, across line breaks. */
function awsActionsIn(text: string): string[] {
  const found: string[] = []
  for (const m of text.matchAll(/\.(?:call|all)(?:<[^>()]*>)?\(\s*'([a-z0-9]+)',\s*'([A-Za-z]+)'/g)) {
    const prefix = (ENDPOINT_PREFIX as Record<string, string>)[m[1] as string]
    assert.ok(prefix, `unknown AWS service ${m[1]}`)
    found.push(`${prefix}:${m[2]}`)
  }
  return found
}

interface KubeRead {
  group?: string
  resource?: string
  name?: string
  verb: 'get' | 'list'
  url?: string
}

/** A path literal as RBAC sees it: group, resource, `get` on a named object or `list` on a collection. */
function kubeReadOf(path: string): KubeRead {
  const clean = path.split('?')[0] as string
  if (!clean.startsWith('/api')) return { url: clean, verb: 'get' }
  const parts = clean.split('/').slice(1)
  const [group, rest] = parts[0] === 'api' ? ['', parts.slice(2)] : [parts[1] as string, parts.slice(3)]
  const scoped = rest[0] === 'namespaces' && rest.length >= 3 ? rest.slice(2) : rest
  const [resource, name] = scoped
  const literal = name !== undefined && !name.includes('${') ? name : undefined
  return {
    group,
    resource,
    verb: name === undefined ? 'list' : 'get',
    ...(literal ? { name: literal } : {}),
  }
}

const kubePathsIn = (text: string) =>
  [...text.matchAll(/(['`])(\/apis?\/[^'`]*|\/version)\1/g)].map((m) => m[2] as string)

const allows = (rule: RbacRule, r: KubeRead) =>
  rule.verbs.includes(r.verb) &&
  (r.url
    ? (rule.nonResourceURLs ?? []).includes(r.url)
    : (rule.apiGroups ?? []).includes(r.group as string) &&
      (rule.resources ?? []).includes(r.resource as string) &&
      (!rule.resourceNames || (r.name !== undefined && rule.resourceNames.includes(r.name))))

test('the scanners read calls and paths as the facts layer writes them', () => {
  assert.deepEqual(
    awsActionsIn(
      `x = await aws.all<eb.ListRulesCommandOutput, eb.Rule>(\n  'eventbridge',\n  'ListRules', {})`,
    ),
    ['events:ListRules'],
  )
  assert.deepEqual(awsActionsIn(`aws.call('iam', 'GetRole', {})`), ['iam:GetRole'])
  assert.deepEqual(kubeReadOf('/api/v1/namespaces/${ns}/serviceaccounts/${name}'), {
    group: '',
    resource: 'serviceaccounts',
    verb: 'get',
  })
  assert.deepEqual(kubeReadOf('/apis/apps/v1/deployments?labelSelector=x'), {
    group: 'apps',
    resource: 'deployments',
    verb: 'list',
  })
  assert.deepEqual(kubeReadOf('/api/v1/namespaces/kube-system/configmaps/aws-auth'), {
    group: '',
    resource: 'configmaps',
    verb: 'get',
    name: 'aws-auth',
  })
  assert.deepEqual(kubePathsIn("get('/version') get(`/api/v1/nodes`)"), ['/version', '/api/v1/nodes'])
})

test('every AWS call of the facts layer has its action in the policy, and every action a call', () => {
  const called = new Set(factsSources.flatMap((s) => awsActionsIn(s.text)))
  assert.ok(called.size > 20, `only ${called.size} calls found: the scanner no longer matches the source`)
  const listed = new Set(DOCTOR_IAM_ACTIONS)
  assert.equal(listed.size, DOCTOR_IAM_ACTIONS.length, 'an action is listed twice')
  assert.deepEqual([...called].filter((a) => !listed.has(a)).sort(), [], 'calls without their action')
  assert.deepEqual([...listed].filter((a) => !called.has(a)).sort(), [], 'actions no call needs')
})

test('every Kubernetes path of the facts layer is granted, and every rule is used', () => {
  const reads = factsSources.flatMap((s) => kubePathsIn(s.text).map((p) => ({ p, r: kubeReadOf(p) })))
  assert.ok(reads.length > 15, `only ${reads.length} paths found: the scanner no longer matches the source`)
  const ungranted = reads.filter(({ r }) => !DOCTOR_KUBE_READS.some((rule) => allows(rule, r)))
  assert.deepEqual(
    ungranted.map(({ p }) => p),
    [],
    'paths no rule grants',
  )
  for (const rule of DOCTOR_KUBE_READS)
    for (const verb of rule.verbs)
      for (const target of rule.nonResourceURLs ?? [])
        assert.ok(
          reads.some(({ r }) => r.url === target && r.verb === verb),
          `${verb} ${target} is granted but not read`,
        )
  for (const rule of DOCTOR_KUBE_READS)
    for (const group of rule.apiGroups ?? [])
      for (const resource of rule.resources ?? [])
        for (const verb of rule.verbs)
          assert.ok(
            reads.some(({ r }) => r.group === group && r.resource === resource && r.verb === verb),
            `${verb} ${group || 'core'}/${resource} is granted but not read`,
          )
})

test("the README's doctor policy is the policy --print-iam-policy prints", () => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
  const section = readme.slice(readme.indexOf('## Permissions karpctl needs'))
  const block = /```json\n([\s\S]*?)```/.exec(section)?.[1]
  assert.ok(block, 'no JSON block in the permissions section')
  assert.deepEqual(JSON.parse(block), doctorIamPolicy())
})

test("the chart's ClusterRole grants exactly doctor's reads and the Events it writes", () => {
  const text = readFileSync(join(ROOT, 'charts/karpctl-doctor/templates/clusterrole.yaml'), 'utf8')
  // The rules are plain YAML; only whole-line directives (events.enabled's `if`) are template, dropped here.
  const plain = text
    .slice(text.indexOf('rules:'))
    .split('\n')
    .filter((l) => !/^\s*\{\{-?[^}]*\}\}\s*$/.test(l))
    .join('\n')
  const rules = parse(plain) as { rules: RbacRule[] }
  assert.deepEqual(rules.rules, [...DOCTOR_KUBE_READS, ...DOCTOR_SERVE_WRITES])
})

test('the policy is read-only: every action reads (Describe, Get, List) or simulates', () => {
  for (const a of DOCTOR_IAM_ACTIONS)
    assert.match(a, /^[a-z0-9]+:(Describe|Get|List|SimulatePrincipalPolicy$)/, `${a} is not a read`)
  for (const rule of DOCTOR_KUBE_READS)
    assert.deepEqual(
      rule.verbs.filter((v) => v !== 'get' && v !== 'list'),
      [],
    )
})
