// A node's route to the cluster's API endpoint: private endpoints by the VPC's local route, public-only
// ones by a subnet's default route out (NAT, or an internet gateway with a public address).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { EksCluster, Subnet } from '../../../../src/facts/types.js'
import { apiRouteCauses, type RouteInputs } from '../../../../src/why/node/api-route.js'
import type { RouteTable } from '../../../../src/why/node/types.js'
import { healthyNodeClass } from '../../../helpers/facts.js'

const cluster = (over: Partial<EksCluster>): EksCluster => ({
  name: 'demo',
  arn: 'arn:aws:eks:us-west-2:111122223333:cluster/demo',
  version: '1.31',
  vpcId: 'vpc-1',
  subnetIds: [],
  securityGroupIds: [],
  tags: {},
  endpointPublicAccess: true,
  endpointPrivateAccess: false,
  publicAccessCidrs: ['0.0.0.0/0'],
  ...over,
})
const subnet = (id: string, zone: string, mapPublicIpOnLaunch?: boolean): Subnet => ({
  id,
  vpcId: 'vpc-1',
  availabilityZone: zone,
  tags: {},
  ...(mapPublicIpOnLaunch !== undefined ? { mapPublicIpOnLaunch } : {}),
})
const table = (id: string, subnets: string[], target?: string, main = false): RouteTable => ({
  id,
  main,
  subnetIds: subnets,
  routes: [
    { destination: '10.0.0.0/16', target: 'local' },
    ...(target ? [{ destination: '0.0.0.0/0', target }] : []),
  ],
})
const inputs = (c: EksCluster, subnets: Subnet[], tables: RouteTable[], zone?: string): RouteInputs => ({
  cluster: { ok: true, value: c },
  nodeClass: healthyNodeClass(),
  subnets: { ok: true, value: subnets },
  zone,
  tables: { ok: true, value: tables },
})

test('a private endpoint is reached inside the VPC: passes, naming DNS (kubernetes-sigs/karpenter#2981)', () => {
  const [c] = apiRouteCauses(
    inputs(cluster({ endpointPrivateAccess: true, endpointPublicAccess: false }), [], []),
  )
  assert.equal(c?.status, 'pass')
  assert.match(c?.message ?? '', /private .* local route .*DNS support and hostnames/)
})

test('public only, a private subnet with no default route: fails, with the private-endpoint fix', () => {
  const causes = apiRouteCauses(
    inputs(
      cluster({}),
      [subnet('subnet-a', 'us-west-2a'), subnet('subnet-b', 'us-west-2b')],
      [table('rtb-main', [], 'igw-1', true), table('rtb-priv', ['subnet-a'])],
      'us-west-2a',
    ),
  )
  assert.equal(causes.length, 1, 'only the subnet in the NodeClaim’s zone is judged')
  assert.equal(causes[0]?.status, 'fail')
  assert.match(
    causes[0]?.message ?? '',
    /subnet subnet-a \(us-west-2a, route table rtb-priv\) has no default route/,
  )
  assert.equal(
    causes[0]?.fix?.commands?.[0],
    'aws eks update-cluster-config --region us-west-2 --name demo --resources-vpc-config endpointPrivateAccess=true',
  )
})

test('public only, an internet gateway route with no public address on the instance fails (aws/karpenter-provider-aws#988)', () => {
  const [c] = apiRouteCauses(
    inputs(cluster({}), [subnet('subnet-a', 'us-west-2a', false)], [table('rtb-pub', ['subnet-a'], 'igw-1')]),
  )
  assert.equal(c?.status, 'fail')
  assert.match(
    c?.message ?? '',
    /internet gateway igw-1, but its instances get no public address \(MapPublicIpOnLaunch false/,
  )
  const withIp = apiRouteCauses(
    inputs(cluster({}), [subnet('subnet-a', 'us-west-2a', true)], [table('rtb-pub', ['subnet-a'], 'igw-1')]),
  )
  assert.equal(withIp[0]?.status, 'pass')
})

test('public only, a subnet with no association uses the main table; a NAT route passes', () => {
  const [c] = apiRouteCauses(
    inputs(cluster({}), [subnet('subnet-a', 'us-west-2a')], [table('rtb-main', [], 'nat-0abc', true)]),
  )
  assert.equal(c?.status, 'pass')
  assert.match(c?.message ?? '', /public only; subnet subnet-a route out/)
})

test('public only, restricted publicAccessCidrs: the address the node leaves by must be among them', () => {
  const [c] = apiRouteCauses(
    inputs(
      cluster({ publicAccessCidrs: ['203.0.113.7/32'] }),
      [subnet('subnet-a', 'us-west-2a')],
      [table('rtb-a', ['subnet-a'], 'nat-0abc')],
    ),
  )
  assert.equal(c?.status, 'warn')
  assert.match(c?.message ?? '', /admits only 203\.0\.113\.7\/32/)
})

test('a blackhole default route fails; a transit gateway is beyond what is read (info)', () => {
  const hole: RouteTable = {
    id: 'rtb-a',
    main: false,
    subnetIds: ['subnet-a'],
    routes: [{ destination: '0.0.0.0/0', target: 'nat-gone', state: 'blackhole' }],
  }
  assert.equal(apiRouteCauses(inputs(cluster({}), [subnet('subnet-a', 'z')], [hole]))[0]?.status, 'fail')
  assert.equal(
    apiRouteCauses(inputs(cluster({}), [subnet('subnet-a', 'z')], [table('rtb-a', ['subnet-a'], 'tgw-1')]))[0]
      ?.status,
    'info',
  )
})

test('what was not read is unknown with the reason, never passed', () => {
  const c = cluster({})
  assert.equal(
    apiRouteCauses({ cluster: undefined, subnets: undefined, tables: undefined })[0]?.status,
    'unknown',
  )
  const noAccess = cluster({})
  delete noAccess.endpointPrivateAccess
  delete noAccess.endpointPublicAccess
  assert.match(
    apiRouteCauses(inputs(noAccess, [], []))[0]?.message ?? '',
    /does not say how the API endpoint is reached/,
  )
  const denied = apiRouteCauses({
    ...inputs(c, [subnet('subnet-a', 'z')], []),
    tables: {
      ok: false,
      error: {
        read: 'ec2:DescribeRouteTables',
        code: 'UnauthorizedOperation',
        kind: 'denied',
        message: 'AccessDenied',
      },
    },
  })
  assert.equal(denied[0]?.status, 'unknown')
  assert.match(denied[0]?.message ?? '', /needs ec2:DescribeRouteTables/)
})
