// The resources that remove one tenant, shared by `tenant remove` and teardown (which removes every
// tenant before the controller): one copy, below both use cases.
import { MANAGED_LABEL } from '../desired/karpenter.js'
import { TENANT_KEY, tenantNames, tenantTags, type InstallFacts } from '../desired/tenant.js'
import { inlinePolicyAbsent } from './resources/inline-policy.js'
import { accessEntryAbsent } from './resources/eks-access-absent.js'
import { awsAuthEntryAbsent } from './resources/aws-auth-absent.js'
import { iamRoleAbsent } from './resources/iam-role-absent.js'
import { karpenterLifts, kubeObjectAbsent } from './resources/kube-object-absent.js'
import type { Resource } from './types.js'

/** In safe order: the NodePool (and its nodes) first, the role last; only what carries this tenant's marks. */
export function tenantRemoveResources(i: InstallFacts, tenant: string, timeoutMs: number): Resource[] {
  const n = tenantNames({ ...i, tenant })
  const labels = { [MANAGED_LABEL]: 'karpctl', [TENANT_KEY]: tenant }
  const sel = encodeURIComponent(`karpenter.sh/nodepool=${n.nodePool}`)
  const tags = tenantTags(i.clusterName, tenant)
  return [
    kubeObjectAbsent({
      address: 'kube.nodepool.tenant',
      kind: 'NodePool',
      name: n.nodePool,
      path: `/apis/karpenter.sh/v1/nodepools/${n.nodePool}`,
      labels,
      dependsOn: [],
      waitGone: {
        paths: [
          `/apis/karpenter.sh/v1/nodeclaims?labelSelector=${sel}`,
          `/api/v1/nodes?labelSelector=${sel}`,
        ],
        timeoutMs,
        what: 'NodeClaims and nodes',
      },
    }),
    kubeObjectAbsent({
      address: 'kube.ec2nodeclass.tenant',
      kind: 'EC2NodeClass',
      name: n.nodeClass,
      path: `/apis/karpenter.k8s.aws/v1/ec2nodeclasses/${n.nodeClass}`,
      labels,
      dependsOn: ['kube.nodepool.tenant'],
      // Gone, not only marked: Karpenter deletes its instance profile, and teardown uninstalls the
      // controller after this.
      waitSelf: karpenterLifts(timeoutMs),
    }),
    // Both ways in: a cluster that allows access entries may still have had the tenant mapped in
    // aws-auth (install --node-access aws-auth). Each removal touches only what karpctl marked.
    ...(i.access === 'access-entry'
      ? [
          accessEntryAbsent({
            clusterName: i.clusterName,
            principalArn: n.roleArn,
            ownership: tags,
            dependsOn: ['kube.ec2nodeclass.tenant'],
          }),
        ]
      : []),
    awsAuthEntryAbsent({ roleArn: n.roleArn, dependsOn: ['kube.ec2nodeclass.tenant'] }),
    inlinePolicyAbsent({
      address: 'iam-policy.tenant-passrole',
      roleName: i.controllerRoleName,
      policyName: n.passRolePolicy,
      dependsOn: ['kube.ec2nodeclass.tenant'],
    }),
    iamRoleAbsent({
      address: 'iam-role.tenant',
      name: n.roleName,
      ownership: tags,
      dependsOn: [
        'kube.ec2nodeclass.tenant',
        ...(i.access === 'access-entry' ? ['eks-access-entry.remove'] : []),
        'aws-auth.remove',
        'iam-policy.tenant-passrole',
      ],
    }),
  ]
}
