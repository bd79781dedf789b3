// The NodePool and EC2NodeClass shapes the checks read (src/facts/types.ts, test/helpers/facts.ts and
// the examples) must be objects the real Karpenter CRDs accept, and every field path a check reads
// must exist in the CRD schema. Validated against test/fixtures/karpenter/v1.14.1.
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import { Ajv } from 'ajv'
import { parse } from 'yaml'
import type { EC2NodeClass, Facts, NodePool } from '../../../src/facts/types.js'
import { fixturePath, repoRoot } from '../../helpers/fixtures.js'
import { healthyFacts } from '../../helpers/facts.js'

interface Crd {
  spec: { versions: { name: string; schema: { openAPIV3Schema: Schema } }[] }
}
interface Schema {
  type?: string
  properties?: Record<string, Schema>
  items?: Schema
  additionalProperties?: Schema | boolean
  [k: string]: unknown
}

function schemaOf(file: string): Schema {
  const crd = parse(readFileSync(fixturePath(`v1.14.1/charts/karpenter/crds/${file}`), 'utf8')) as Crd
  const v1 = crd.spec.versions.find((v) => v.name === 'v1')
  assert.ok(v1, `${file} serves v1`)
  return v1.schema.openAPIV3Schema
}

// Kubernetes extensions (x-kubernetes-*) are not JSON Schema: Ajv ignores them when not strict.
const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false })
const nodePoolSchema = schemaOf('karpenter.sh_nodepools.yaml')
const nodeClassSchema = schemaOf('karpenter.k8s.aws_ec2nodeclasses.yaml')
const validNodePool = ajv.compile(nodePoolSchema)
const validNodeClass = ajv.compile(nodeClassSchema)

const asObject = (apiVersion: string, kind: string, o: NodePool | EC2NodeClass) => ({
  apiVersion,
  kind,
  ...o,
  status: undefined,
})

function objects(facts: Facts) {
  return {
    pools: facts.kube.nodePools.ok ? facts.kube.nodePools.value : [],
    classes: facts.kube.nodeClasses.ok ? facts.kube.nodeClasses.value : [],
  }
}

const sources: [string, Facts][] = [
  ['test/helpers/facts.ts', healthyFacts()],
  ...['healthy.json', 'shared-cluster-broken.json'].map((f): [string, Facts] => [
    `examples/${f}`,
    JSON.parse(readFileSync(`${repoRoot}/examples/${f}`, 'utf8')) as Facts,
  ]),
]

for (const [name, facts] of sources) {
  test(`${name}: NodePools and EC2NodeClasses validate against the v1.14.1 CRD schemas`, () => {
    const { pools, classes } = objects(facts)
    assert.ok(pools.length > 0 && classes.length > 0)
    for (const p of pools) {
      assert.ok(
        validNodePool(asObject('karpenter.sh/v1', 'NodePool', p)),
        `${p.metadata.name}: ${ajv.errorsText(validNodePool.errors)}`,
      )
    }
    for (const c of classes) {
      assert.ok(
        validNodeClass(asObject('karpenter.k8s.aws/v1', 'EC2NodeClass', c)),
        `${c.metadata.name}: ${ajv.errorsText(validNodeClass.errors)}`,
      )
    }
  })
}

function hasPath(schema: Schema, path: string): boolean {
  let cur: Schema | undefined = schema
  for (const part of path.split('.')) {
    if (!cur) return false
    if (part === '[]') cur = cur.items
    else
      cur =
        cur.properties?.[part] ??
        (typeof cur.additionalProperties === 'object' ? cur.additionalProperties : undefined)
  }
  return cur !== undefined
}

test('every field path the checks read exists in the CRD schemas', () => {
  const nodePoolPaths = [
    'spec.template.metadata.labels',
    'spec.template.spec.nodeClassRef.group',
    'spec.template.spec.nodeClassRef.kind',
    'spec.template.spec.nodeClassRef.name',
    'spec.template.spec.taints.[].key',
    'spec.template.spec.taints.[].value',
    'spec.template.spec.taints.[].effect',
    'spec.template.spec.requirements.[].key',
    'spec.template.spec.requirements.[].operator',
    'spec.template.spec.requirements.[].values',
    'spec.limits',
    'status.conditions.[].type',
    'status.conditions.[].status',
  ]
  const nodeClassPaths = [
    'spec.role',
    'spec.instanceProfile',
    'spec.subnetSelectorTerms.[].tags',
    'spec.subnetSelectorTerms.[].id',
    'spec.securityGroupSelectorTerms.[].tags',
    'spec.securityGroupSelectorTerms.[].id',
    'spec.securityGroupSelectorTerms.[].name',
    'spec.amiSelectorTerms.[].alias',
    'spec.tags',
    'status.conditions.[].reason',
    'status.subnets.[].id',
    'status.securityGroups.[].id',
    'status.instanceProfile',
  ]
  for (const p of nodePoolPaths) assert.ok(hasPath(nodePoolSchema, p), `NodePool ${p}`)
  for (const p of nodeClassPaths) assert.ok(hasPath(nodeClassSchema, p), `EC2NodeClass ${p}`)
  assert.ok(
    !hasPath(nodeClassSchema, 'spec.subnetSelectorTerms.[].alias'),
    'the walker can tell a missing path',
  )
})

test('the schema rejects what the checks flag: a NodePool without nodeClassRef', () => {
  const bad = {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name: 'x' },
    spec: { template: { spec: { requirements: [] } } },
  }
  assert.equal(validNodePool(bad), false)
})
