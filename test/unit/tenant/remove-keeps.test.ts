// A tenant's removal takes back only that tenant's records: its aws-auth entry and its name in the
// karpctl.io/added-map-roles record go; the other tenants' and the install's entries (and their
// records), the entries karpctl never added, and every other byte of aws-auth stay. Its PassRole
// grant goes from the controller role; the other tenants' grants stay.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { applyPlan } from '../../../src/plan/apply.js'
import { buildPlan } from '../../../src/plan/plan.js'
import { ADDED_MAP_ROLES } from '../../../src/plan/resources/aws-auth.js'
import type { ApplyEnv, Resource } from '../../../src/plan/types.js'
import type { InstallFacts } from '../../../src/desired/tenant.js'
import { tenantRemoveResources } from '../../../src/plan/tenant-removal.js'
import { installOf } from '../../../src/tenant/tenant.js'
import { healthyFacts } from '../../helpers/facts.js'
import { recordingEnv } from '../../helpers/recording-env.js'

const AWS_AUTH = '/api/v1/namespaces/kube-system/configmaps/aws-auth'
const arn = (role: string) => `arn:aws:iam::123456789012:role/${role}`
const INSTALL = arn('KarpenterNodeRole-demo')
const ACME = arn('KarpenterNodeRole-demo-acme')
const BETA = arn('KarpenterNodeRole-demo-beta')
// A tenant whose role's ARN begins with acme's.
const ACME_EU = arn('KarpenterNodeRole-demo-acme-eu')

const entry = (roleArn: string) =>
  [
    '- groups:',
    '  - system:bootstrappers',
    '  - system:nodes',
    `  rolearn: ${roleArn}`,
    '  username: system:node:{{EC2PrivateDNSName}}',
  ].join('\n')
const NODEGROUP = entry(arn('eksctl-demo-nodegroup-ng-1-NodeInstanceRole-1A2B'))
const text = (...entries: string[]) => `${entries.join('\n')}\n`

interface ConfigMap {
  metadata: { name: string; namespace: string; annotations?: Record<string, string> }
  data: Record<string, string>
}

const configMap = (mapRoles: string, added: string[]): ConfigMap => ({
  metadata: {
    name: 'aws-auth',
    namespace: 'kube-system',
    annotations: { [ADDED_MAP_ROLES]: JSON.stringify(added), 'owner.example/note': 'kept' },
  },
  data: { mapRoles, mapUsers: '- userarn: arn:aws:iam::123456789012:user/u\n  username: u\n' },
})

/** The API server's aws-auth: reads answer the stored object, a PUT replaces it. */
function kubeWith(cm: ConfigMap) {
  let stored = structuredClone(cm)
  const read = async (path: string) => {
    assert.equal(path, AWS_AUTH)
    return structuredClone(stored)
  }
  const env = {
    kube: {
      get: read,
      fresh: read,
      write: async (method: string, path: string, body: ConfigMap) => {
        assert.deepEqual([method, path], ['PUT', AWS_AUTH])
        stored = structuredClone(body)
      },
    },
    sleep: async () => {},
  } as unknown as ApplyEnv
  return { env, stored: () => stored }
}

const install = (): InstallFacts => ({ ...installOf(healthyFacts()), access: 'aws-auth' })

function removal(tenant: string, address: string): Resource {
  const r = tenantRemoveResources(install(), tenant, 1000).find((x) => x.address === address)
  assert.ok(r, address)
  return r
}

async function removeMapping(tenant: string, env: ApplyEnv) {
  const plan = await buildPlan('t', [{ ...removal(tenant, 'aws-auth.remove'), dependsOn: [] }], env)
  const r = await applyPlan(plan, env)
  assert.deepEqual(r.failed, [])
  return plan.steps[0]?.verdict.action
}

test("removing tenant acme's mapping keeps beta's, the install's and the node group's entries and records", async () => {
  // Kills: the record emptied instead of filtered; the record dropped while others remain; another
  // tenant's entry removed (acme-eu's ARN begins with acme's); the removal aimed at another role.
  const before = configMap(text(NODEGROUP, entry(INSTALL), entry(ACME), entry(ACME_EU), entry(BETA)), [
    INSTALL,
    ACME,
    ACME_EU,
    BETA,
  ])
  const k = kubeWith(before)
  assert.equal(await removeMapping('acme', k.env), 'delete')
  assert.deepEqual(k.stored(), {
    ...before,
    metadata: {
      ...before.metadata,
      annotations: {
        [ADDED_MAP_ROLES]: JSON.stringify([INSTALL, ACME_EU, BETA]),
        'owner.example/note': 'kept',
      },
    },
    data: { ...before.data, mapRoles: text(NODEGROUP, entry(INSTALL), entry(ACME_EU), entry(BETA)) },
  })

  // Then beta: the install's entry and record are still there, as before either tenant was added.
  assert.equal(await removeMapping('beta', k.env), 'delete')
  assert.deepEqual(k.stored().data.mapRoles, text(NODEGROUP, entry(INSTALL), entry(ACME_EU)))
  assert.deepEqual(k.stored().metadata.annotations, {
    [ADDED_MAP_ROLES]: JSON.stringify([INSTALL, ACME_EU]),
    'owner.example/note': 'kept',
  })
  // A second removal of acme finds nothing of it and changes nothing.
  assert.equal(await removeMapping('acme', k.env), 'unchanged')
})

test('the last tenant record goes with its entry; an entry of the same role karpctl did not add stays', async () => {
  const only = kubeWith(configMap(text(NODEGROUP, entry(ACME)), [ACME]))
  await removeMapping('acme', only.env)
  assert.deepEqual(only.stored().data.mapRoles, text(NODEGROUP))
  assert.deepEqual(only.stored().metadata.annotations, { 'owner.example/note': 'kept' })

  const notOurs = configMap(text(NODEGROUP, entry(ACME)), [INSTALL])
  const k = kubeWith(notOurs)
  assert.equal(await removeMapping('acme', k.env), 'unchanged')
  assert.deepEqual(k.stored(), notOurs)
})

test('a record whose entry was removed by hand goes, so a later hand-made entry is never taken for karpctl’s', async () => {
  const k = kubeWith(configMap(text(NODEGROUP), [ACME, BETA]))
  assert.equal(await removeMapping('acme', k.env), 'update')
  assert.deepEqual(k.stored().data.mapRoles, text(NODEGROUP))
  assert.deepEqual(JSON.parse(k.stored().metadata.annotations!['karpctl.io/added-map-roles']!), [BETA])
  assert.equal(await removeMapping('acme', k.env), 'unchanged')
})

test("removing tenant acme deletes its PassRole grant from the controller role, and no other tenant's", async () => {
  // Kills: the grant's policy name or role taken from anything but this tenant and the install.
  const { env, awsWrites } = recordingEnv({
    aws: {
      GetRole: () => ({ Role: { RoleName: install().controllerRoleName } }),
      GetRolePolicy: (i) => ({
        PolicyName: i.PolicyName,
        PolicyDocument: encodeURIComponent('{"Version":"2012-10-17","Statement":[]}'),
      }),
    },
  })
  const plan = await buildPlan(
    't',
    [{ ...removal('acme', 'iam-policy.tenant-passrole'), dependsOn: [] }],
    env,
  )
  await applyPlan(plan, env)
  assert.deepEqual(awsWrites, [
    {
      op: 'DeleteRolePolicy',
      input: { RoleName: install().controllerRoleName, PolicyName: 'KarpctlTenantPassRole-acme' },
    },
  ])
})
