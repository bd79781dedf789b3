// Where a node's pods would go if Karpenter removed it: only onto nodes that carry every label they
// require. Found by the e2e corpus on the real controller (test/e2e/why-node.e2e.test.ts, "kept"):
// karpctl placed a pod that selects karpenter.sh/nodepool=k-kept on a managed node group's node, which
// has no such label, and called its node underutilized; Karpenter said "Can't replace with a cheaper
// node". Karpenter's existing-node check is Requirements.Compatible with no AllowUndefined
// (sigs.k8s.io/karpenter v1.14.1 pkg/controllers/provisioning/scheduling/existingnode.go CanAdd,
// pkg/scheduling/requirements.go Compatible: "label %q does not have known values").
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { placeElsewhere } from '../../../../src/why/node/fit-elsewhere.js'
import type { KarpenterNode } from '../../../../src/why/node/types.js'
import { clusterView } from '../../../../src/why/node/view.js'
import { machine, nodeFacts, NOW, pod } from '../../../helpers/why-node.js'

/** A managed node group's node: room to spare, and none of Karpenter's labels. */
const nodegroupNode: KarpenterNode = {
  metadata: {
    name: 'ip-192-168-96-10',
    labels: { 'kubernetes.io/arch': 'amd64', 'node.kubernetes.io/instance-type': 'm5.large' },
  },
  spec: {},
  status: {
    allocatable: { cpu: '1930m', memory: '7Gi', pods: '29' },
    conditions: [{ type: 'Ready', status: 'True' }],
  },
}

function placed(selector: Record<string, string>) {
  const a = machine('ip-a')
  const web = pod('web-1', 'ip-a')
  web.spec.nodeSelector = selector
  const f = nodeFacts({ machines: [a], pods: [web] })
  f.nodes = { ok: true, value: [a.node, nodegroupNode] }
  return placeElsewhere(clusterView(f, NOW.getTime()), 'ip-a', [web])[0]
}

test('a pod that requires a label goes only to nodes that carry it (karpenter.sh/nodepool on a node group node: no)', () => {
  assert.deepEqual(placed({ 'karpenter.sh/nodepool': 'default' }), { pod: 'shop/web-1' })
  // a label both carry, with the node group's value: it goes there
  assert.deepEqual(placed({ 'kubernetes.io/arch': 'amd64' }), { pod: 'shop/web-1', node: 'ip-192-168-96-10' })
})

test('NotIn and DoesNotExist on a label the node lacks do not keep the pod off it', () => {
  const a = machine('ip-a')
  const web = pod('web-1', 'ip-a')
  web.spec.affinity = {
    nodeAffinity: {
      requiredDuringSchedulingIgnoredDuringExecution: {
        nodeSelectorTerms: [
          { matchExpressions: [{ key: 'karpenter.sh/nodepool', operator: 'DoesNotExist' }] },
        ],
      },
    },
  }
  const f = nodeFacts({ machines: [a], pods: [web] })
  f.nodes = { ok: true, value: [a.node, nodegroupNode] }
  assert.equal(placeElsewhere(clusterView(f, NOW.getTime()), 'ip-a', [web])[0]?.node, 'ip-192-168-96-10')
})
