// CRDs handed to karpctl's karpenter-crd release get Helm's marks back as recorded.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import {
  CRD_ADOPTED_BY,
  HELM_KEEP,
  HELM_MANAGED_BY,
  HELM_RELEASE_NAME,
  HELM_RELEASE_NAMESPACE,
  REPLACED_MARKS,
} from '../../../../src/plan/resources/crd-handover.js'
import { handedCrdsRestore } from '../../../../src/plan/resources/crd-handback.js'
import { env, run } from '../../../helpers/teardown-env.js'

const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions'

test("handed CRDs: each of this cluster's gets Helm's marks as recorded, the record and keep policy off, in one merge patch", async () => {
  const r = handedCrdsRestore({ clusterName: 'demo', dependsOn: ['helm.karpenter-crd'] })
  assert.deepEqual(
    [r.address, r.kind, r.name, r.group, r.dependsOn, r.desired, r.permissions],
    [
      'kube.crds.restore',
      'CRD ownership',
      `${CRD_ADOPTED_BY}=demo`,
      'Kubernetes',
      ['helm.karpenter-crd'],
      { restored: true },
      [],
    ],
  )
  const crd = (name: string, annotations: Record<string, string>) => ({ metadata: { name, annotations } })
  const e = env({
    kube: {
      [CRDS]: {
        items: [
          crd('nodepools.karpenter.sh', {
            [CRD_ADOPTED_BY]: 'demo',
            [REPLACED_MARKS]: JSON.stringify({
              labels: { [HELM_MANAGED_BY]: 'Helm' },
              annotations: { [HELM_RELEASE_NAME]: 'karpenter-crd', [HELM_RELEASE_NAMESPACE]: 'karpenter' },
            }),
          }),
          crd('nodeclaims.karpenter.sh', { [CRD_ADOPTED_BY]: 'demo', [REPLACED_MARKS]: 'not json' }),
          crd('ec2nodeclasses.karpenter.k8s.aws', { [CRD_ADOPTED_BY]: 'other' }),
          { metadata: { name: 'bare.example.com' } },
        ],
      },
    },
  })
  const { cur, verdict } = await run(r, e.env)
  const off = {
    labels: { [HELM_MANAGED_BY]: null },
    annotations: {
      [HELM_RELEASE_NAME]: null,
      [HELM_RELEASE_NAMESPACE]: null,
      [HELM_KEEP]: null,
      [CRD_ADOPTED_BY]: null,
      [REPLACED_MARKS]: null,
    },
  }
  const restoredPool = {
    labels: { [HELM_MANAGED_BY]: 'Helm' },
    annotations: {
      ...off.annotations,
      [HELM_RELEASE_NAME]: 'karpenter-crd',
      [HELM_RELEASE_NAMESPACE]: 'karpenter',
    },
  }
  assert.deepEqual(cur, [
    {
      name: 'nodepools.karpenter.sh',
      restore: restoredPool,
      now: {
        labels: {},
        annotations: {
          [CRD_ADOPTED_BY]: 'demo',
          [REPLACED_MARKS]: JSON.stringify({
            labels: { [HELM_MANAGED_BY]: 'Helm' },
            annotations: { [HELM_RELEASE_NAME]: 'karpenter-crd', [HELM_RELEASE_NAMESPACE]: 'karpenter' },
          }),
        },
      },
    },
    {
      name: 'nodeclaims.karpenter.sh',
      restore: off,
      now: { labels: {}, annotations: { [CRD_ADOPTED_BY]: 'demo', [REPLACED_MARKS]: 'not json' } },
    },
  ])
  assert.deepEqual(verdict, {
    action: 'update',
    changes: [
      { field: `nodepools.karpenter.sh.labels.${HELM_MANAGED_BY}`, from: undefined, to: 'Helm' },
      { field: `nodepools.karpenter.sh.annotations.${CRD_ADOPTED_BY}`, from: 'demo', to: undefined },
      {
        field: `nodepools.karpenter.sh.annotations.${REPLACED_MARKS}`,
        from: JSON.stringify({
          labels: { [HELM_MANAGED_BY]: 'Helm' },
          annotations: { [HELM_RELEASE_NAME]: 'karpenter-crd', [HELM_RELEASE_NAMESPACE]: 'karpenter' },
        }),
        to: undefined,
      },
      {
        field: `nodepools.karpenter.sh.annotations.${HELM_RELEASE_NAME}`,
        from: undefined,
        to: 'karpenter-crd',
      },
      {
        field: `nodepools.karpenter.sh.annotations.${HELM_RELEASE_NAMESPACE}`,
        from: undefined,
        to: 'karpenter',
      },
      { field: `nodeclaims.karpenter.sh.annotations.${CRD_ADOPTED_BY}`, from: 'demo', to: undefined },
      { field: `nodeclaims.karpenter.sh.annotations.${REPLACED_MARKS}`, from: 'not json', to: undefined },
    ],
  })
  assert.deepEqual(e.writes, [
    [
      `PATCH ${CRDS}/nodepools.karpenter.sh`,
      { body: { metadata: restoredPool }, contentType: 'application/merge-patch+json' },
    ],
    [
      `PATCH ${CRDS}/nodeclaims.karpenter.sh`,
      { body: { metadata: off }, contentType: 'application/merge-patch+json' },
    ],
  ])
})
