// The conditions nodeclass-ready judges, one at a time (issue 12, item 8: mutation testing): an
// EC2NodeClass's Ready condition (True, missing, Unknown, False and the conditions that say why) with
// the AWS CLI query each failing condition calls for, a NodePool's reference and Ready condition, no
// NodePool at all, and when the check does not apply. Each finding is pinned exact.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { nodeclassReady } from '../../../src/checks/nodeclass-ready.js'
import { runCheck } from '../../../src/checks/run.js'
import type { Condition, EC2NodeClass, Facts } from '../../../src/facts/types.js'
import { both, nodeClass, nodePool, setChartVersion } from '../../helpers/check-fixtures.js'
import { healthyFacts, healthyNodeClass, ok } from '../../helpers/facts.js'

const result = (fn?: (f: Facts) => void) => runCheck(nodeclassReady, healthyFacts(fn))
const run = (fn?: (f: Facts) => void) => result(fn).findings
const withConditions =
  (...conditions: Condition[]) =>
  (f: Facts) => {
    nodeClass(f).status = { conditions }
  }
const notReady = (...failing: Condition[]) =>
  withConditions(...failing, { type: 'Ready', status: 'False', reason: 'UnhealthyDependents' })
const False = (type: string): Condition => ({ type, status: 'False' })
const editSpec = (spec: Partial<EC2NodeClass['spec']>) => (f: Facts) => {
  Object.assign(nodeClass(f).spec, spec)
}
const commandsOf = (fn: (f: Facts) => void) => run(fn)[0]?.fix?.commands?.slice(2)
const summaryOf = (fn: (f: Facts) => void) => run(fn)[0]?.fix?.summary

const GET = 'kubectl get ec2nodeclass default -o yaml'
const LOGS = 'kubectl -n kube-system logs deploy/karpenter -c controller | grep default'
const SUBNETS = "--region us-west-2 --query 'Subnets[].[SubnetId,VpcId,AvailabilityZone]'"
const GROUPS = "--region us-west-2 --query 'SecurityGroups[].[GroupId,VpcId]'"
const FAIL_SUMMARY =
  'fix what the failing condition names; Karpenter re-resolves the selectors within minutes'
const NODECLASS_EVIDENCE = (conditions: Condition[]) => ({
  conditions,
  role: 'KarpenterNodeRole-demo',
  instanceProfile: null,
  subnetSelectorTerms: [{ tags: { 'karpenter.sh/discovery': 'demo' } }],
  securityGroupSelectorTerms: [{ tags: { 'karpenter.sh/discovery': 'demo' } }],
})
const READY_POOL = {
  nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
  conditions: [{ type: 'Ready', status: 'True' }],
}

test('nodeclass-ready is an error-severity cluster check', () => {
  assert.equal(nodeclassReady.meta.id, 'nodeclass-ready')
  assert.equal(nodeclassReady.meta.severity, 'error')
  assert.equal(nodeclassReady.meta.category, 'cluster')
})

test('healthy: the EC2NodeClass and the NodePool pass, exactly', () => {
  assert.deepEqual(run(), [
    { status: 'pass', subject: 'ec2nodeclass/default', message: 'EC2NodeClass default is Ready' },
    {
      status: 'pass',
      subject: 'nodepool/default',
      message: 'NodePool default uses EC2NodeClass default and is Ready',
      evidence: READY_POOL,
    },
  ])
})

test('a Ready EC2NodeClass counts the subnets and security groups it resolved', () => {
  const counted = (status: EC2NodeClass['status']) => run((f) => (nodeClass(f).status = status))[0]?.message
  const ready = [{ type: 'Ready', status: 'True' }]
  assert.equal(
    counted({
      conditions: ready,
      subnets: [
        { id: 'subnet-1', zone: 'us-west-2a' },
        { id: 'subnet-2', zone: 'us-west-2b' },
      ],
      securityGroups: [{ id: 'sg-1' }],
    }),
    'EC2NodeClass default is Ready (2 subnets, 1 security groups)',
  )
  assert.equal(
    counted({ conditions: ready, subnets: [] }),
    'EC2NodeClass default is Ready (0 subnets, 0 security groups)',
  )
})

test('an EC2NodeClass with Ready=Unknown warns: not reconciled, with the get and the log grep', () => {
  const unknown: Condition = { type: 'Ready', status: 'Unknown', reason: 'Reconciling', message: 'awaiting' }
  assert.deepEqual(run(withConditions(unknown))[0], {
    status: 'warn',
    subject: 'ec2nodeclass/default',
    message:
      'EC2NodeClass default has Ready=Unknown (Reconciling: awaiting): the controller has not reconciled it (is it running?)',
    evidence: NODECLASS_EVIDENCE([unknown]),
    fix: {
      summary: 'check that the controller is running and read what it says about this EC2NodeClass',
      commands: [GET, LOGS],
    },
  })
})

test('an EC2NodeClass with no Ready condition (only others) warns, never passes', () => {
  const findings = run(withConditions({ type: 'SubnetsReady', status: 'True' }))
  assert.equal(findings[0]?.status, 'warn')
  assert.equal(
    findings[0]?.message,
    'EC2NodeClass default has no Ready condition: the controller has not reconciled it (is it running?)',
  )
})

test('a condition is described by its reason, its message, both or neither', () => {
  const message = (c: Condition) => run(withConditions(c))[0]?.message
  const tail = ': the controller has not reconciled it (is it running?)'
  assert.equal(message({ type: 'Ready', status: 'Unknown' }), `EC2NodeClass default has Ready=Unknown${tail}`)
  assert.equal(
    message({ type: 'Ready', status: 'Unknown', reason: 'Pending' }),
    `EC2NodeClass default has Ready=Unknown (Pending)${tail}`,
  )
  assert.equal(
    message({ type: 'Ready', status: 'Unknown', message: 'waiting' }),
    `EC2NodeClass default has Ready=Unknown (waiting)${tail}`,
  )
})

test('Ready=False with no failing dependent: the roll-up itself is the reason', () => {
  const ready: Condition = { type: 'Ready', status: 'False', reason: 'Broken', message: 'see logs' }
  const conditions = [{ type: 'SubnetsReady', status: 'True' }, ready]
  assert.deepEqual(run(withConditions(...conditions))[0], {
    status: 'fail',
    subject: 'ec2nodeclass/default',
    message: 'EC2NodeClass default is not Ready: Ready=False (Broken: see logs)',
    evidence: NODECLASS_EVIDENCE(conditions),
    fix: { summary: FAIL_SUMMARY, commands: [GET, LOGS] },
  })
})

test('Ready=False: every failing dependent is named, in order; the passing ones are not', () => {
  const findings = run(
    withConditions(
      { type: 'SubnetsReady', status: 'False', reason: 'NotFound' },
      { type: 'AMIsReady', status: 'True' },
      { type: 'SecurityGroupsReady', status: 'False', message: 'none matched' },
      { type: 'Ready', status: 'False', reason: 'UnhealthyDependents' },
    ),
  )
  assert.equal(
    findings[0]?.message,
    'EC2NodeClass default is not Ready: SubnetsReady=False (NotFound); SecurityGroupsReady=False (none matched)',
  )
  assert.equal(findings[0]?.fix?.summary, `${FAIL_SUMMARY} (see also discovery-tags)`)
  assert.deepEqual(findings[0]?.fix?.commands, [
    GET,
    LOGS,
    `aws ec2 describe-subnets --filters Name=tag:karpenter.sh/discovery,Values=demo ${SUBNETS}`,
    `aws ec2 describe-security-groups --filters Name=tag:karpenter.sh/discovery,Values=demo ${GROUPS}`,
  ])
})

test('subnets selected by id: the query names the ids, not the tags', () => {
  const fix = both(
    notReady(False('SubnetsReady')),
    editSpec({ subnetSelectorTerms: [{ tags: { a: 'b' } }, { id: 'subnet-1' }, { id: 'subnet-2' }] }),
  )
  assert.deepEqual(commandsOf(fix), [`aws ec2 describe-subnets --subnet-ids subnet-1 subnet-2 ${SUBNETS}`])
})

test('security groups selected by tags: the first tag term only, a wildcard value as tag-key', () => {
  const fix = both(
    notReady(False('SecurityGroupsReady')),
    editSpec({
      securityGroupSelectorTerms: [
        { name: 'web' },
        { tags: { team: '*', env: 'prod' } },
        { tags: { other: 'x' } },
      ],
    }),
  )
  assert.deepEqual(commandsOf(fix), [
    `aws ec2 describe-security-groups --filters Name=tag-key,Values=team Name=tag:env,Values=prod ${GROUPS}`,
  ])
  assert.equal(summaryOf(fix), `${FAIL_SUMMARY} (see also discovery-tags)`)
})

test('security groups selected by id, subnets by name only: ids, and no filter at all', () => {
  const fix = both(
    notReady(False('SubnetsReady'), False('SecurityGroupsReady')),
    editSpec({ subnetSelectorTerms: [{ name: 'private' }], securityGroupSelectorTerms: [{ id: 'sg-1' }] }),
  )
  assert.deepEqual(commandsOf(fix), [
    `aws ec2 describe-subnets ${SUBNETS}`,
    `aws ec2 describe-security-groups --group-ids sg-1 ${GROUPS}`,
  ])
})

test('a tag value that needs quoting is shell-quoted in the filter', () => {
  const fix = both(
    notReady(False('SubnetsReady')),
    editSpec({ subnetSelectorTerms: [{ tags: { Name: 'my subnet' } }] }),
  )
  assert.deepEqual(commandsOf(fix), [
    `aws ec2 describe-subnets --filters 'Name=tag:Name,Values=my subnet' ${SUBNETS}`,
  ])
})

test('instance profile not ready: the role named by ARN, else the profile, else the EC2NodeClass name', () => {
  const profile = notReady(False('InstanceProfileReady'))
  const summary = `${FAIL_SUMMARY} (see also node-role and passrole-node-role)`
  const arnRole = both(profile, editSpec({ role: 'arn:aws:iam::123456789012:role/nodes/Custom' }))
  assert.deepEqual(commandsOf(arnRole), ['aws iam get-role --role-name Custom'])
  assert.equal(summaryOf(arnRole), summary)
  const byProfile = both(profile, editSpec({ role: undefined, instanceProfile: 'KarpenterProfile' }))
  assert.deepEqual(commandsOf(byProfile), [
    'aws iam get-instance-profile --instance-profile-name KarpenterProfile',
  ])
  assert.equal(run(byProfile)[0]?.evidence?.role, null)
  assert.equal(run(byProfile)[0]?.evidence?.instanceProfile, 'KarpenterProfile')
  assert.deepEqual(commandsOf(both(profile, editSpec({ role: undefined }))), [
    'aws iam get-instance-profile --instance-profile-name default',
  ])
})

test('validation failed: no AWS query, the controller-policy hint; several hints are joined', () => {
  const validation = notReady(False('ValidationSucceeded'))
  assert.deepEqual(commandsOf(validation), [])
  assert.equal(
    summaryOf(validation),
    `${FAIL_SUMMARY} (see also controller-policy (Karpenter dry-runs its EC2 calls))`,
  )
  assert.equal(
    summaryOf(notReady(False('SubnetsReady'), False('InstanceProfileReady'), False('ValidationSucceeded'))),
    `${FAIL_SUMMARY} (see also discovery-tags; see also node-role and passrole-node-role; see also controller-policy (Karpenter dry-runs its EC2 calls))`,
  )
})

test("the log grep reads the controller's namespace and Deployment name", () => {
  const fix = both(withConditions({ type: 'Ready', status: 'Unknown' }), (f) => {
    if (f.kube.deployment.ok && f.kube.deployment.value)
      f.kube.deployment.value.metadata = { name: 'kc', namespace: 'karpenter' }
    if (f.kube.release.ok && f.kube.release.value) f.kube.release.value.namespace = 'karpenter'
  })
  assert.deepEqual(
    run(fix)[0]?.fix?.commands?.[1],
    'kubectl -n karpenter logs deploy/kc -c controller | grep default',
  )
})

const RECREATE_WHY =
  "the NodePool's nodeClassRef.group and .kind are immutable (the API server refuses a patch): it must be deleted and created again, and deleting a NodePool makes Karpenter delete its NodeClaims (their nodes drain)"

test('a NodePool referencing another kind with no group: fail, "(none)", recreated (the API server refuses the patch)', () => {
  const findings = run((f) => {
    nodePool(f).spec.template.spec.nodeClassRef = { group: '', kind: 'NodeClass', name: 'default' }
  })
  assert.deepEqual(findings[1], {
    status: 'fail',
    subject: 'nodepool/default',
    message:
      'NodePool default references NodeClass default in group (none), not an EC2NodeClass (karpenter.k8s.aws): Karpenter on AWS cannot launch from it',
    code: 'nodeclassref-immutable',
    evidence: {
      nodeClassRef: { group: '', kind: 'NodeClass', name: 'default' },
      conditions: [{ type: 'Ready', status: 'True' }],
      manualBecause: RECREATE_WHY,
    },
    fix: {
      summary: `recreate NodePool default pointing at EC2NodeClass default: ${RECREATE_WHY}. In this order: check that no NodeClaim belongs to it (it cannot have launched any; if the first command lists some, create the corrected copy under another name and wait for its nodes before deleting default), save it, write the corrected copy, delete it, create the copy`,
      commands: [
        'kubectl get nodeclaims -l karpenter.sh/nodepool=default',
        'kubectl get nodepool default -o yaml > nodepool-default.yaml',
        `kubectl patch --local -f nodepool-default.yaml --type merge -p '{"metadata":{"resourceVersion":null,"uid":null,"creationTimestamp":null,"generation":null,"managedFields":null},"status":null,"spec":{"template":{"spec":{"nodeClassRef":{"group":"karpenter.k8s.aws","kind":"EC2NodeClass","name":"default"}}}}}' -o yaml > nodepool-default.fixed.yaml`,
        'kubectl delete nodepool default',
        'kubectl create -f nodepool-default.fixed.yaml',
      ],
    },
  })
})

test('a NodePool referencing an EC2NodeClass of the right group under the wrong kind fails', () => {
  const findings = run((f) => {
    nodePool(f).spec.template.spec.nodeClassRef.kind = 'EC2NodeClas'
  })
  assert.equal(findings[1]?.status, 'fail')
})

test('a NodePool referencing a missing EC2NodeClass: patched to the first one that exists', () => {
  const findings = run((f) => {
    nodePool(f).spec.template.spec.nodeClassRef.name = 'gpu'
    f.kube.nodeClasses = ok([{ ...healthyNodeClass(), metadata: { name: 'general' } }, healthyNodeClass()])
  })
  assert.deepEqual(findings[2]?.evidence, {
    nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'gpu' },
    conditions: [{ type: 'Ready', status: 'True' }],
    existing: ['general', 'default'],
  })
  assert.equal(
    findings[2]?.fix?.summary,
    'point the NodePool at EC2NodeClass general (or create EC2NodeClass gpu)',
  )
  assert.match(findings[2]?.fix?.commands?.[0] ?? '', /"name":"general"\}/)
})

test('a NodePool and no EC2NodeClass at all: create the one it names', () => {
  const findings = run((f) => {
    f.kube.nodeClasses = ok([])
  })
  assert.deepEqual(findings, [
    {
      status: 'fail',
      subject: 'nodepool/default',
      message: 'NodePool default references EC2NodeClass default, which does not exist',
      evidence: { ...READY_POOL, existing: [] },
      fix: {
        summary: 'create EC2NodeClass default, then the NodePool resolves',
        commands: ['kubectl get ec2nodeclasses'],
      },
    },
  ])
})

test('a NodePool that is not Ready: fail with the status queries', () => {
  const findings = run((f) => {
    nodePool(f).status = { conditions: [{ type: 'Ready', status: 'False' }] }
  })
  assert.deepEqual(findings[1], {
    status: 'fail',
    subject: 'nodepool/default',
    message: 'NodePool default is not Ready: Ready=False',
    evidence: { nodeClassRef: READY_POOL.nodeClassRef, conditions: [{ type: 'Ready', status: 'False' }] },
    fix: {
      summary: 'read the NodePool status; a NodePool is not Ready while its EC2NodeClass is not',
      commands: [
        `kubectl get nodepool default -o jsonpath='{.status.conditions}'`,
        'kubectl describe nodepool default',
      ],
    },
  })
})

test('a NodePool with no status yet passes on its reference, without claiming Ready', () => {
  const findings = run((f) => {
    nodePool(f).status = undefined
  })
  assert.deepEqual(findings[1], {
    status: 'pass',
    subject: 'nodepool/default',
    message: 'NodePool default uses EC2NodeClass default',
    evidence: { nodeClassRef: READY_POOL.nodeClassRef, conditions: [] },
  })
})

const NODEPOOL_YAML = (nodeClass: string) => `apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: default
spec:
  template:
    spec:
      nodeClassRef:
        group: karpenter.k8s.aws
        kind: EC2NodeClass
        name: ${nodeClass}
      requirements:
        - key: kubernetes.io/arch
          operator: In
          values: ["amd64"]
        - key: karpenter.sh/capacity-type
          operator: In
          values: ["on-demand"]
  limits:
    cpu: "1000"
  disruption:
    consolidationPolicy: WhenEmptyOrUnderutilized
    consolidateAfter: 1m
`

test('no NodePool: warn, a minimal NodePool on the first EC2NodeClass', () => {
  const findings = run((f) => {
    f.kube.nodePools = ok([])
    nodeClass(f).metadata.name = 'general'
  })
  assert.equal(findings.length, 2)
  assert.deepEqual(findings[1], {
    status: 'warn',
    subject: 'demo',
    message: 'no NodePool exists: Karpenter will launch nothing',
    evidence: { nodeClasses: ['general'] },
    fix: {
      summary: 'apply a minimal NodePool with kubectl apply -f',
      snippet: { language: 'yaml', text: NODEPOOL_YAML('general') },
    },
  })
})

test('no NodePool and no EC2NodeClass, with a release: both to apply, the node role of the cluster', () => {
  const findings = run((f) => {
    f.kube.nodePools = ok([])
    f.kube.nodeClasses = ok([])
  })
  assert.deepEqual(findings, [
    {
      status: 'warn',
      subject: 'demo',
      message: 'no NodePool exists: Karpenter will launch nothing (and there is no EC2NodeClass either)',
      evidence: { nodeClasses: [] },
      fix: {
        summary:
          'apply a minimal NodePool and EC2NodeClass (adjust the role name to your node role) with kubectl apply -f',
        snippet: {
          language: 'yaml',
          text: `${NODEPOOL_YAML('default')}---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: default
spec:
  role: KarpenterNodeRole-demo
  amiSelectorTerms:
    - alias: al2023@latest
  subnetSelectorTerms:
    - tags:
        karpenter.sh/discovery: demo
  securityGroupSelectorTerms:
    - tags:
        karpenter.sh/discovery: demo
`,
        },
      },
    },
  ])
})

test('a wrong reference to an EC2NodeClass that exists: patched to that one, not the first', () => {
  const findings = run((f) => {
    nodePool(f).spec.template.spec.nodeClassRef.group = 'karpenter.sh'
    f.kube.nodeClasses = ok([{ ...healthyNodeClass(), metadata: { name: 'general' } }, healthyNodeClass()])
  })
  assert.match(
    findings[2]?.fix?.summary ?? '',
    /^recreate NodePool default pointing at EC2NodeClass default: /,
  )
  assert.match(findings[2]?.fix?.commands?.[2] ?? '', /^kubectl patch --local .*"name":"default"\}/)
})

test('a v0.x release read by its app version: skipped, naming that version', () => {
  assert.deepEqual(run(setChartVersion('main', '0.36.2')), [
    {
      status: 'skipped',
      message: 'Karpenter 0.36.2 uses Provisioners / AWSNodeTemplates: see karpenter-version',
    },
  ])
})

test('a v0.x release: skipped, naming its version', () => {
  assert.deepEqual(run(setChartVersion('0.36.2')), [
    {
      status: 'skipped',
      message: 'Karpenter 0.36.2 uses Provisioners / AWSNodeTemplates: see karpenter-version',
    },
  ])
})

test('no release, NodePool or EC2NodeClass: skipped as not installed', () => {
  const r = result((f) => {
    f.kube.release = ok(null)
    f.kube.nodePools = ok([])
    f.kube.nodeClasses = ok([])
  })
  assert.deepEqual(r.findings, [
    {
      status: 'skipped',
      message:
        'Karpenter is not installed (no Helm release, no NodePool, no EC2NodeClass): see karpenter-version',
    },
  ])
})

test('no release but a NodePool or an EC2NodeClass: still judged', () => {
  const noRelease = (f: Facts) => {
    f.kube.release = ok(null)
  }
  assert.equal(result(both(noRelease, (f) => (f.kube.nodeClasses = ok([])))).status, 'fail')
  assert.equal(result(both(noRelease, (f) => (f.kube.nodePools = ok([])))).status, 'warn')
  assert.equal(result(noRelease).status, 'pass')
})

test('a NodePool with Ready=Unknown passes on its reference, without claiming Ready', () => {
  const findings = run((f) => {
    nodePool(f).status = {
      conditions: [{ type: 'Ready', status: 'Unknown', reason: 'AwaitingReconciliation' }],
    }
  })
  assert.equal(findings[1]?.status, 'pass')
  assert.equal(findings[1]?.message, 'NodePool default uses EC2NodeClass default')
})

test('an EC2NodeClass with no status at all: warn, with no conditions as evidence', () => {
  const findings = run((f) => (nodeClass(f).status = undefined))
  assert.equal(findings[0]?.status, 'warn')
  assert.deepEqual(findings[0]?.evidence, NODECLASS_EVIDENCE([]))
})
