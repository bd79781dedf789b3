// Smoke test of the e2e bed itself: real moto_server, etcd, kube-apiserver,
// kube-controller-manager and helm, the real Karpenter chart. No karpctl code.
import assert from 'node:assert/strict'
import test from 'node:test'
import { DescribeSecurityGroupsCommand, DescribeSubnetsCommand } from '@aws-sdk/client-ec2'
import { DescribeClusterCommand } from '@aws-sdk/client-eks'
import { ListRuleNamesByTargetCommand, ListTargetsByRuleCommand } from '@aws-sdk/client-eventbridge'
import {
  GetInstanceProfileCommand,
  GetRoleCommand,
  ListAttachedRolePoliciesCommand,
  ListOpenIDConnectProvidersCommand,
  ListRolesCommand,
} from '@aws-sdk/client-iam'
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs'
import { parse } from 'yaml'
import {
  authorizeWebhookIngress,
  awsClients,
  groupAlive,
  helm,
  KARPENTER_CRDS,
  revokeWebhookIngress,
  seedAws,
  seedKubernetes,
  startBed,
  type Bed,
  type KubeObject,
} from './bed/index.js'

async function assertStopsClean(bed: Bed): Promise<void> {
  const pids = Object.values(bed.procs).map((p) => p.pid)
  await bed.stop()
  for (const pid of pids) assert.ok(!groupAlive(pid), `process group ${pid} still alive after stop()`)
}

test(
  'bed: getting-started account + Karpenter v1.14.1 chart on a real apiserver',
  { timeout: 15 * 60_000 },
  async (t) => {
    const t0 = Date.now()
    const bed = await startBed()
    t.after(() => bed.stop())
    const tBed = Date.now() - t0
    t.diagnostic(`bed ready in ${tBed}ms; logs in ${bed.tmpDir}/logs`)

    // ---------------------------------------------------------------- AWS
    let t1 = Date.now()
    const seed = await seedAws(bed)
    t.diagnostic(`AWS seeded in ${Date.now() - t1}ms`)
    const aws = awsClients(bed)

    const cluster = (await aws.eks.send(new DescribeClusterCommand({ name: 'demo' }))).cluster!
    assert.equal(cluster.version, '1.34')
    assert.deepEqual([...(cluster.resourcesVpcConfig?.subnetIds ?? [])].sort(), [...seed.subnetIds].sort())
    assert.match(
      cluster.identity?.oidc?.issuer ?? '',
      /^https:\/\/oidc\.eks\.us-west-2\.amazonaws\.com\/id\//,
    )

    const tagFilter = [{ Name: 'tag:karpenter.sh/discovery', Values: ['demo'] }]
    const subnets = (await aws.ec2.send(new DescribeSubnetsCommand({ Filters: tagFilter }))).Subnets ?? []
    assert.equal(subnets.length, 3)
    assert.equal(new Set(subnets.map((s) => s.AvailabilityZone)).size, 3)
    const sgs =
      (await aws.ec2.send(new DescribeSecurityGroupsCommand({ Filters: tagFilter }))).SecurityGroups ?? []
    assert.deepEqual(
      sgs.map((g) => g.GroupId),
      [seed.nodeSecurityGroupId],
    )
    const has8443 = (sgs[0]?.IpPermissions ?? []).some(
      (p) =>
        p.FromPort === 8443 && p.UserIdGroupPairs?.some((u) => u.GroupId === seed.clusterSecurityGroupId),
    )
    assert.ok(has8443, 'node SG allows 8443 from the cluster SG')
    // the break helper works the AWS way (moto matches descriptions on revoke; the seed sets none)
    await revokeWebhookIngress(aws, seed)
    const after8443 = (
      await aws.ec2.send(new DescribeSecurityGroupsCommand({ GroupIds: [seed.nodeSecurityGroupId] }))
    ).SecurityGroups?.[0]?.IpPermissions?.some((p) => p.FromPort === 8443)
    assert.equal(after8443, false, '8443 rule revoked')
    await authorizeWebhookIngress(aws, seed)

    const oidc =
      (await aws.iam.send(new ListOpenIDConnectProvidersCommand({}))).OpenIDConnectProviderList ?? []
    assert.deepEqual(
      oidc.map((o) => o.Arn),
      [seed.oidcProviderArn],
    )

    const ctrl = (await aws.iam.send(new GetRoleCommand({ RoleName: 'KarpenterControllerRole-demo' }))).Role!
    // IAM answers policy documents URL-encoded (as AWS does)
    const trust = JSON.parse(decodeURIComponent(ctrl.AssumeRolePolicyDocument!))
    const stmt = trust.Statement[0]
    assert.equal(stmt.Principal.Federated, seed.oidcProviderArn)
    assert.equal(stmt.Action, 'sts:AssumeRoleWithWebIdentity')
    const host = seed.oidcIssuer.replace('https://', '')
    assert.equal(stmt.Condition.StringEquals[`${host}:sub`], 'system:serviceaccount:kube-system:karpenter')
    assert.equal(stmt.Condition.StringEquals[`${host}:aud`], 'sts.amazonaws.com')
    const ctrlPolicies =
      (await aws.iam.send(new ListAttachedRolePoliciesCommand({ RoleName: 'KarpenterControllerRole-demo' })))
        .AttachedPolicies ?? []
    assert.equal(ctrlPolicies.length, 6)

    const nodePolicies =
      (await aws.iam.send(new ListAttachedRolePoliciesCommand({ RoleName: 'KarpenterNodeRole-demo' })))
        .AttachedPolicies ?? []
    assert.deepEqual(nodePolicies.map((p) => p.PolicyName).sort(), [
      'AmazonEC2ContainerRegistryPullOnly',
      'AmazonEKSWorkerNodePolicy',
      'AmazonEKS_CNI_Policy',
      'AmazonSSMManagedInstanceCore',
    ])
    const ip = await aws.iam.send(
      new GetInstanceProfileCommand({ InstanceProfileName: 'KarpenterNodeInstanceProfile-demo' }),
    )
    assert.equal(ip.InstanceProfile?.Roles?.[0]?.RoleName, 'KarpenterNodeRole-demo')

    const q = await aws.sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: seed.queueUrl,
        AttributeNames: ['Policy', 'MessageRetentionPeriod'],
      }),
    )
    assert.equal(q.Attributes?.MessageRetentionPeriod, '300')
    const qp = JSON.parse(q.Attributes!.Policy!)
    assert.deepEqual(qp.Statement[0].Principal.Service, ['events.amazonaws.com', 'sqs.amazonaws.com'])

    const rules =
      (await aws.events.send(new ListRuleNamesByTargetCommand({ TargetArn: seed.queueArn }))).RuleNames ?? []
    assert.equal(rules.length, 5)
    for (const r of rules) {
      const targets = (await aws.events.send(new ListTargetsByRuleCommand({ Rule: r }))).Targets ?? []
      assert.equal(targets[0]?.Arn, seed.queueArn)
    }
    const slr = (
      await aws.iam.send(new ListRolesCommand({ PathPrefix: '/aws-service-role/spot.amazonaws.com/' }))
    ).Roles
    assert.equal(slr?.[0]?.RoleName, 'AWSServiceRoleForspot')

    // ---------------------------------------------------------------- Kubernetes
    t1 = Date.now()
    await seedKubernetes(bed, { aws: seed })
    t.diagnostic(`Kubernetes seeded (helm install + objects) in ${Date.now() - t1}ms`)
    const kube = bed.kube

    const version = await kube.get<KubeObject>('/version')
    assert.equal(version?.gitVersion, 'v1.34.4')

    for (const name of KARPENTER_CRDS['1.14.1']) {
      const crd = await kube.get(`/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`)
      assert.ok(
        crd?.status?.conditions?.some((c: KubeObject) => c.type === 'Established' && c.status === 'True'),
        `${name} established`,
      )
    }
    const dep = await kube.get('/apis/apps/v1/namespaces/kube-system/deployments/karpenter')
    assert.ok(dep, 'Deployment kube-system/karpenter')
    assert.equal(dep.spec.replicas, 2)
    assert.equal(dep.status.availableReplicas, 2)
    const env = Object.fromEntries(
      (dep.spec.template.spec.containers[0].env as KubeObject[]).map((e) => [e.name, e.value]),
    )
    assert.equal(env.CLUSTER_NAME, 'demo')
    assert.equal(env.INTERRUPTION_QUEUE, 'demo')
    const sa = await kube.get('/api/v1/namespaces/kube-system/serviceaccounts/karpenter')
    assert.equal(
      sa?.metadata?.annotations?.['eks.amazonaws.com/role-arn'],
      'arn:aws:iam::123456789012:role/KarpenterControllerRole-demo',
    )
    const nc = await kube.get('/apis/karpenter.k8s.aws/v1/ec2nodeclasses/default')
    assert.equal(nc?.spec?.role, 'KarpenterNodeRole-demo')
    assert.ok(nc?.status?.conditions?.some((c: KubeObject) => c.type === 'Ready' && c.status === 'True'))
    assert.deepEqual(
      nc?.status?.subnets?.map((x: KubeObject) => x.id),
      seed.subnetIds,
    )
    const np = await kube.get('/apis/karpenter.sh/v1/nodepools/default')
    assert.equal(np?.spec?.template?.spec?.nodeClassRef?.name, 'default')
    const awsAuth = await kube.get('/api/v1/namespaces/kube-system/configmaps/aws-auth')
    assert.equal(parse(awsAuth?.data?.mapRoles)[0].rolearn, seed.nodeRoleArn)
    const nodes = await kube.list('/api/v1/nodes', 'eks.amazonaws.com/nodegroup')
    assert.equal(nodes.length, 2)
    assert.ok(
      nodes.every((n) =>
        n.status.conditions.some((c: KubeObject) => c.type === 'Ready' && c.status === 'True'),
      ),
    )
    assert.ok(
      nodes.every((n) => !n.spec.taints?.length),
      'no node.kubernetes.io/not-ready taint left',
    )

    // CEL/schema validation is real: a bad EC2NodeClass is rejected by the apiserver
    const bad = await kube.request('POST', '/apis/karpenter.k8s.aws/v1/ec2nodeclasses', {
      apiVersion: 'karpenter.k8s.aws/v1',
      kind: 'EC2NodeClass',
      metadata: { name: 'bad' },
      spec: {
        role: 'x',
        instanceProfile: 'y',
        amiSelectorTerms: [{ alias: 'al2023@latest' }],
        subnetSelectorTerms: [],
        securityGroupSelectorTerms: [],
      },
    })
    assert.equal(bad.status, 422, bad.text)

    const list = JSON.parse((await helm(bed, ['list', '-n', 'kube-system', '-o', 'json'])).stdout)
    assert.equal(list[0]?.name, 'karpenter')
    assert.equal(list[0]?.status, 'deployed')
    assert.equal(list[0]?.chart, 'karpenter-1.14.1')

    // namespace deletion works (kube-controller-manager's namespace controller)
    if (bed.procs['kube-controller-manager']) {
      await kube.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'scratch' } })
      await kube.create({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'x', namespace: 'scratch' },
      })
      await kube.delete('/api/v1/namespaces/scratch')
      const deadline = Date.now() + 60_000
      while ((await kube.get('/api/v1/namespaces/scratch')) && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 200))
      }
      assert.equal(await kube.get('/api/v1/namespaces/scratch'), undefined, 'namespace scratch finalized')
    }

    // moto reset wipes AWS
    await bed.resetAws()
    const after =
      (await aws.iam.send(new ListOpenIDConnectProvidersCommand({}))).OpenIDConnectProviderList ?? []
    assert.equal(after.length, 0)

    await assertStopsClean(bed)
    t.diagnostic(`total ${Date.now() - t0}ms (bed start ${tBed}ms)`)
  },
)

test('bed: legacy Karpenter v1.0.14 chart (webhooks) installs', { timeout: 10 * 60_000 }, async (t) => {
  const t0 = Date.now()
  const bed = await startBed({ controllerManager: false })
  t.after(() => bed.stop())
  t.diagnostic(`bed (no kube-controller-manager) ready in ${Date.now() - t0}ms`)
  await seedKubernetes(bed, { chartVersion: '1.0.14', nodePool: false, nodes: 1 })
  const list = JSON.parse((await helm(bed, ['list', '-n', 'kube-system', '-o', 'json'])).stdout)
  assert.equal(list[0]?.chart, 'karpenter-1.0.14')
  const dep = await bed.kube.get('/apis/apps/v1/namespaces/kube-system/deployments/karpenter')
  const ports = (dep?.spec.template.spec.containers[0].ports as KubeObject[]).map((p) => p.containerPort)
  assert.ok(ports.includes(8443), `webhook port in ${ports}`)
  const crd = await bed.kube.get(
    '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/nodepools.karpenter.sh',
  )
  assert.equal(crd?.spec?.conversion?.strategy, 'Webhook')
  await assertStopsClean(bed)
})
