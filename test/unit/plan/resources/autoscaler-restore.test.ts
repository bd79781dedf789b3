// A cluster-autoscaler karpctl scaled down gets its recorded replicas back.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { SCALED_FROM } from '../../../../src/desired/ownership.js'
import { autoscalerRestore } from '../../../../src/plan/resources/autoscaler-restore.js'
import { env, run } from '../../../helpers/teardown-env.js'

test('autoscaler restore: only Deployments with the record, the replicas as a number, in one merge patch each', async () => {
  const r = autoscalerRestore({ dependsOn: ['h'] })
  assert.deepEqual(
    [r.address, r.kind, r.name, r.group, r.dependsOn],
    [
      'kube.cluster-autoscaler.restore',
      'Deployment',
      `scaled down by karpctl (${SCALED_FROM})`,
      'Kubernetes',
      ['h'],
    ],
  )
  const e = env({
    kube: {
      '/apis/apps/v1/deployments': {
        items: [
          {
            metadata: {
              name: 'cluster-autoscaler',
              namespace: 'kube-system',
              annotations: { [SCALED_FROM]: '2' },
            },
          },
          { metadata: { name: 'app', namespace: 'default' } },
          { metadata: { name: 'other', namespace: 'default', annotations: { x: '1' } } },
        ],
      },
    },
  })
  const { cur, verdict } = await run(r, e.env)
  assert.deepEqual(cur, [{ namespace: 'kube-system', name: 'cluster-autoscaler', replicas: 2 }])
  assert.deepEqual(verdict, {
    action: 'update',
    changes: [{ field: 'kube-system/cluster-autoscaler replicas', from: 0, to: 2 }],
  })
  assert.deepEqual(e.writes, [
    [
      'PATCH /apis/apps/v1/namespaces/kube-system/deployments/cluster-autoscaler',
      {
        body: { metadata: { annotations: { [SCALED_FROM]: null } }, spec: { replicas: 2 } },
        contentType: 'application/merge-patch+json',
      },
    ],
  ])
  const none = env()
  assert.deepEqual((await run(r, none.env)).verdict, {
    action: 'unchanged',
    changes: [],
    note: 'nothing recorded',
  })
})
