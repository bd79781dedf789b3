// Regenerates examples/*.json: run `node --import tsx scripts/make-examples.ts`.
// healthy.json — a getting-started install of Karpenter 1.14.1 on `demo`.
// shared-cluster-broken.json — `demo` as one cluster shared by two customers (acme, globex) on the
// webhook-era chart 1.0.14, with the mistakes the tutorials produce: no 8443 rule, an IRSA trust
// naming the wrong namespace, no PassRole for a tenant node role, the STS annotation in the values but
// not on the ServiceAccount the platform team manages, a last upgrade that failed because a
// toleration value was a boolean (`--set tolerations[0].value=true`: the API server rejects the
// Deployment, Helm records the revision as failed), and a tenant subnet selector that finds nothing.
import { writeFileSync } from 'node:fs'
import type { Facts, NodePool, EC2NodeClass } from '../src/facts/types.js'
import { referencePolicies } from '../src/desired/reference-policy.js'
import {
  ACCOUNT,
  healthyFacts,
  irsaTrust,
  nodeRole,
  ok,
  passRoleEvaluation,
  REGION,
} from '../test/helpers/facts.js'

const stable = (f: Facts) => JSON.stringify(f, null, 2) + '\n'

writeFileSync('examples/healthy.json', stable(healthyFacts()))

const tenants = ['acme', 'globex']
const broken = healthyFacts((f) => {
  f.meta.notes = []
  const release = f.kube.release.ok ? f.kube.release.value! : null
  if (!release) return
  // Webhook-era chart, installed into its own namespace.
  release.chartVersion = '1.0.14'
  release.appVersion = '1.0.14'
  release.namespace = 'karpenter'
  release.computedValues.webhook = { enabled: true, port: 8443 }
  // The ServiceAccount is the platform team's (serviceAccount.create=false); the values ask for the
  // regional STS annotation, which the live ServiceAccount never got.
  const sa = release.computedValues.serviceAccount as {
    create?: boolean
    name?: string
    annotations: Record<string, unknown>
  }
  sa.create = false
  sa.name = 'karpenter'
  sa.annotations['eks.amazonaws.com/sts-regional-endpoints'] = 'true'
  release.values.serviceAccount = { create: false, name: 'karpenter', annotations: { ...sa.annotations } }
  delete release.renderedServiceAccount
  // The latest upgrade, `--set tolerations[0].value=true`, failed: the API server refused the Deployment.
  release.revision = 3
  release.status = 'failed'
  const tolerations = [{ key: 'dedicated', operator: 'Equal', value: true, effect: 'NoSchedule' }]
  release.values.tolerations = tolerations
  release.computedValues.tolerations = tolerations
  if (f.kube.serviceAccount.ok && f.kube.serviceAccount.value)
    f.kube.serviceAccount.value.metadata.namespace = 'karpenter'
  if (f.kube.deployment.ok && f.kube.deployment.value)
    f.kube.deployment.value.metadata.namespace = 'karpenter'
  // The trust policy still says kube-system, from the tutorial.
  const controller = f.iam.roles['KarpenterControllerRole-demo']
  if (controller?.ok && controller.value) {
    controller.value.role.trust = irsaTrust('kube-system', 'karpenter')
    // The tutorial of that version made the role: 1.0.14's getting-started policy.
    controller.value.attached = ok(
      referencePolicies('1.0.14', {
        partition: 'aws',
        region: REGION,
        accountId: ACCOUNT,
        clusterName: 'demo',
        nodeRoleArns: [nodeRole().role.arn],
        queueArn: `arn:aws:sqs:${REGION}:${ACCOUNT}:demo`,
      }).map((p) => ({
        arn: `arn:aws:iam::${ACCOUNT}:policy/${p.name}`,
        name: p.name,
        document: p.document,
      })),
    )
  }
  // No 8443 rule from the cluster security group.
  for (const read of Object.values(f.ec2.securityGroupsByNodeClass))
    if (read.ok) for (const sg of read.value) sg.ingress = []

  // Two tenants: their own NodePool, EC2NodeClass and node role.
  const pools = f.kube.nodePools.ok ? f.kube.nodePools.value : []
  const classes = f.kube.nodeClasses.ok ? f.kube.nodeClasses.value : []
  for (const t of tenants) {
    const role = `KarpenterNodeRole-demo-${t}`
    const roleArn = `arn:aws:iam::${ACCOUNT}:role/${role}`
    const pool: NodePool = {
      metadata: { name: `tenant-${t}`, labels: { 'karpctl.io/tenant': t } },
      spec: {
        template: {
          metadata: { labels: { 'karpctl.io/tenant': t } },
          spec: {
            nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: `tenant-${t}` },
            taints: [{ key: 'karpctl.io/tenant', value: t, effect: 'NoSchedule' }],
            requirements: [
              { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['spot', 'on-demand'] },
            ],
          },
        },
        limits: { cpu: '200' },
      },
      status: { conditions: [{ type: 'Ready', status: 'True' }] },
    }
    const nodeClass: EC2NodeClass = {
      metadata: { name: `tenant-${t}`, labels: { 'karpctl.io/tenant': t } },
      spec: {
        role,
        subnetSelectorTerms: [{ tags: { 'karpenter.sh/discovery': 'demo' } }],
        securityGroupSelectorTerms: [{ tags: { 'karpenter.sh/discovery': 'demo' } }],
        amiSelectorTerms: [{ alias: 'al2023@latest' }],
        tags: { 'karpctl.io/tenant': t, 'cost-center': t },
      },
      status: { conditions: [{ type: 'Ready', status: 'True' }] },
    }
    pools.push(pool)
    classes.push(nodeClass)
    f.iam.roles[role] = ok(nodeRole(role))
    f.ec2.subnetsByNodeClass[`tenant-${t}`] = f.ec2.subnetsByNodeClass.default!
    f.ec2.securityGroupsByNodeClass[`tenant-${t}`] = f.ec2.securityGroupsByNodeClass.default!
    f.iam.passRole[roleArn] = ok(
      passRoleEvaluation({
        resource: roleArn,
        decision: t === 'globex' ? 'implicitDeny' : 'allowed',
        matchedStatements: t === 'globex' ? [] : ['KarpenterPassTenantRoles'],
      }),
    )
    if (f.kube.awsAuth.ok && f.kube.awsAuth.value)
      f.kube.awsAuth.value.push({
        rolearn: roleArn,
        username: 'system:node:{{EC2PrivateDNSName}}',
        groups: ['system:bootstrappers', 'system:nodes'],
      })
  }
  // globex's subnets were never tagged: its selector (a private-subnet tag) matches nothing.
  const globex = classes.find((c) => c.metadata.name === 'tenant-globex')!
  globex.spec.subnetSelectorTerms = [
    { tags: { 'karpenter.sh/discovery': 'demo', 'network/tier': 'private-globex' } },
  ]
  f.ec2.subnetsByNodeClass['tenant-globex'] = ok([])
  // What a 1.0.14 install looks like: CRDs still serve v1beta1, the cluster on Kubernetes 1.31.
  if (f.kube.crds.ok) for (const c of f.kube.crds.value) c.servedVersions = ['v1', 'v1beta1']
  if (f.eks.cluster.ok && f.eks.cluster.value) f.eks.cluster.value.version = '1.31'
  f.kube.serverVersion = ok('v1.31.4')
  f.meta.collectedAt = '2026-11-29T12:00:00.000Z'
  f.meta.region = REGION
})
writeFileSync('examples/shared-cluster-broken.json', stable(broken))
console.log('wrote examples/healthy.json, examples/shared-cluster-broken.json')
