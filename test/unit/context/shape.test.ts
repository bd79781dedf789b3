// The read layer's shape guard (issue 36 §4, "Internals shown"): wrong types from a server become one
// line naming where and what came, for every well-known field, never a TypeError later.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { BadAnswer, kubeShapeProblem, listOf, shapeOf } from '../../../src/context/shape.js'
import { answerOf } from '../../../src/errors.js'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { parse } from 'yaml'
import { fixturePath } from '../../helpers/fixtures.js'

test('kubeShapeProblem: a list whose items as an object, a CRD whose storedVersions is text', () => {
  assert.equal(kubeShapeProblem({ kind: 'PodList', items: { a: 1 } }), 'items as an object, not a list')
  assert.equal(
    kubeShapeProblem({ metadata: { name: 'nodepools.karpenter.sh' }, status: { storedVersions: 'v1' } }),
    'status.storedVersions as the text "v1", not a list',
  )
  assert.equal(
    kubeShapeProblem({ status: { storedVersions: ['v1', 1] } }),
    'status.storedVersions as a list with an item that is not text',
  )
})

test('kubeShapeProblem: nulls and wrong types where Kubernetes always sends a shape', () => {
  // Four ways a hostile or broken API has answered (issue 36: "nulls or wrong types … TypeError").
  assert.equal(kubeShapeProblem({ items: [{ metadata: null }] }), 'items[0].metadata as null, not an object')
  assert.equal(
    kubeShapeProblem({ items: [{ metadata: { name: 7 } }] }),
    'items[0].metadata.name as the number 7, not text',
  )
  assert.equal(
    kubeShapeProblem({ metadata: { name: 'p', labels: { app: 1 } } }),
    'metadata.labels as an object with a value that is not text',
  )
  assert.equal(
    kubeShapeProblem({ metadata: { name: 'n' }, status: { conditions: 'Ready' } }),
    'status.conditions as the text "Ready", not a list',
  )
  assert.equal(kubeShapeProblem({ metadata: { name: 'p' }, spec: [] }), 'spec as a list of 0, not an object')
})

test('kubeShapeProblem: what real answers hold passes (nulls Go writes, free text, maps of any keys)', () => {
  assert.equal(kubeShapeProblem({ kind: 'PodList', items: [] }), undefined)
  assert.equal(kubeShapeProblem({ items: null }), undefined)
  assert.equal(
    kubeShapeProblem({
      metadata: { name: 'p', labels: { items: 'x', name: 'y' }, annotations: {} },
      spec: { nodeSelector: { items: 'z' }, containers: [{ name: 'c', env: [{ name: 'E', value: 'v' }] }] },
      status: { conditions: null, phase: 'Pending' },
    }),
    undefined,
  )
  // Opaque data (a Helm release Secret) is not walked.
  assert.equal(kubeShapeProblem({ metadata: { name: 's' }, data: { release: 'H4sI' } }), undefined)
  // Another `kind` inside a spec is the CRD's own business.
  assert.equal(kubeShapeProblem({ metadata: { name: 'n' }, spec: { ref: { kind: 3 } } }), undefined)
})

test('kubeShapeProblem: 50,000 items or a deep answer cost no stack', () => {
  const items = Array.from({ length: 50_000 }, (_, i) => ({ metadata: { name: `p${i}` } }))
  assert.equal(kubeShapeProblem({ items }), undefined)
  let deep: Record<string, unknown> = {}
  for (let i = 0; i < 100_000; i++) deep = { a: deep }
  assert.equal(kubeShapeProblem(deep), undefined)
})

test('listOf: absent or null is empty; anything else is a BadAnswer naming what came', () => {
  assert.deepEqual(
    listOf(undefined, () => 'x'),
    [],
  )
  assert.deepEqual(
    listOf(null, () => 'x'),
    [],
  )
  const err = (() => {
    try {
      listOf({ a: 1 } as unknown as number[], () => 'EC2 answered with its items as')
    } catch (e) {
      return e as BadAnswer
    }
  })()
  assert.ok(err instanceof BadAnswer)
  assert.equal(err.message, 'EC2 answered with its items as an object, not a list')
  assert.equal(answerOf(err)?.code, 'BAD_ANSWER')
})

test('shapeOf redacts and clips text it quotes', () => {
  assert.match(shapeOf('ghp_' + 'a'.repeat(36)), /^the text "(?!ghp_a)/)
  assert.equal(shapeOf(Number.NaN), 'the number NaN')
  assert.ok(shapeOf('x'.repeat(500)).length < 60)
})

// CI of stop 41: Karpenter's real CRDs were refused — their schema's `properties` name apiVersion,
// metadata and items as schemas. Every CRD of the reference data passes, list and single.
test('kubeShapeProblem: the real Karpenter CRDs (their openAPIV3Schema is not walked)', () => {
  const dir = fixturePath('v1.14.1/charts/karpenter/crds')
  const crds = readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .map((f) => parse(readFileSync(join(dir, f), 'utf8')) as Record<string, unknown>)
  assert.ok(crds.length >= 3)
  for (const crd of crds) assert.equal(kubeShapeProblem(crd), undefined)
  assert.equal(
    kubeShapeProblem({ kind: 'CustomResourceDefinitionList', metadata: {}, items: crds }),
    undefined,
  )
  // The rest of a CRD is still checked
  assert.match(kubeShapeProblem({ ...crds[0], spec: { versions: 'v1' } }) ?? '', /versions as the text/)
})
