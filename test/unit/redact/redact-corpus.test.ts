// The redaction corpus: a secret in every shape real clusters keep them in (camelCase and
// SCREAMING_SNAKE keys, Helm `env:` pairs, tags, base64 PEM, PGP and SSH keys, URLs with userinfo,
// dockerconfig `auth`, bearer tokens inside kubeconfig text, JWTs, EKS tokens, access keys, …), planted
// in the facts where doctor collects them. None may survive in a saved snapshot, nor in any report
// rendered from it, nor in any report of the live run (whose Kubernetes facts are redacted as collected).
import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { catalog } from '../../../src/checks/catalog.js'
import { runChecks } from '../../../src/checks/run.js'
import { redactKubeFacts } from '../../../src/facts/collect-kube.js'
import { REDACTED, redact } from '../../../src/redact/redact.js'
import { loadSnapshot, saveSnapshot } from '../../../src/facts/snapshot.js'
import type { Facts, HelmRelease } from '../../../src/facts/types.js'
import { healthyFacts } from '../../helpers/facts.js'
import { leaks, plans, reports } from '../../helpers/secret-outputs.js'

interface Plant {
  /** The shape, as the corpus counts it. */
  shape: string
  /** What must not appear anywhere in the output. */
  secret: string
  plant: (f: Facts) => void
}

let n = 0
/** A distinct secret per entry: found in the output, it is that entry that leaked. */
const secret = (prefix = 'Zq') => `${prefix}${(++n).toString(36)}Xv9Lk2Pw7Rt4`

const b64 = (s: string) => Buffer.from(s).toString('base64')

/** `length` characters of `alphabet`, distinct per call (fake secrets in a rule's exact shape). */
function fake(
  length: number,
  alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789',
): string {
  let seed = ++n * 7919
  let out = ''
  for (let i = 0; i < length; i++) {
    seed = (seed * 1103515245 + 12345) % 2147483648
    out += alphabet[seed % alphabet.length]
  }
  return out
}
const HEX = '0123456789abcdef'

const release = (f: Facts): HelmRelease => {
  assert.ok(f.kube.release.ok && f.kube.release.value)
  return f.kube.release.value
}
/** Sets a value in the release's user values and in its computed values, as Helm stores both. */
const inValues = (f: Facts, set: (v: Record<string, unknown>) => void) => {
  set(release(f).values)
  set(release(f).computedValues)
}
const deploymentEnv = (f: Facts) => {
  assert.ok(f.kube.deployment.ok && f.kube.deployment.value)
  return f.kube.deployment.value.env
}
/** EC2NodeClass userData: not a field the checks read, but collected with the spec as the API gives it. */
const userData = (f: Facts, text: string) => {
  assert.ok(f.kube.nodeClasses.ok)
  const spec = f.kube.nodeClasses.value[0]!.spec as Record<string, unknown>
  spec.userData = `${typeof spec.userData === 'string' ? spec.userData : ''}${text}`
}

function pemBody(): string {
  return `MIIEow${secret('Ib')}AKCAQEA${'q'.repeat(20)}`
}

function corpus(): Plant[] {
  const plants: Plant[] = []
  const add = (shape: string, s: string, plant: (f: Facts) => void) =>
    plants.push({ shape, secret: s, plant })

  // ---- by key, case-insensitive and camelCase-aware ----
  for (const key of [
    'someSecretKey',
    'dbPassword',
    'clientSecret',
    'awsSecretAccessKey',
    'apiKey',
    'DB_PASS',
    'API_KEY',
    'password',
    'PASSWORD',
    'passwd',
    'token',
    'accessToken',
    'refresh_token',
    'sessionToken',
    'privateKey',
    'private-key',
    'client-key-data',
    'authorization',
    'x-api-key',
    'GITHUB_TOKEN',
    'smtpPass',
    'credentials',
    'signingKey',
    'connectionString',
    'passphrase',
  ]) {
    const s = secret()
    add(`key ${key}`, s, (f) => inValues(f, (v) => (v[key] = s)))
  }
  {
    const s = secret()
    add('key nested under a secret-named map', s, (f) =>
      inValues(f, (v) => (v.awsCredentials = { aws: { id: 'x', value: s }, list: [s] })),
    )
  }
  add('number under a password key', '73190482', (f) =>
    inValues(f, (v) => (v.database = { port: 5432, password: 73190482 })),
  )
  {
    const s = secret()
    add('key in the controller env (a map)', s, (f) => (deploymentEnv(f).DB_PASSWORD = s))
  }

  // ---- by the name of {name, value} pairs ----
  for (const name of [
    'AWS_SECRET_ACCESS_KEY',
    'AWS_SESSION_TOKEN',
    'DATABASE_PASSWORD',
    'apiKey',
    'STRIPE_API_KEY',
  ]) {
    const s = secret()
    add(`env pair ${name}`, s, (f) =>
      inValues(f, (v) => {
        // The chart's `controller.env`: one list, every pair added to it.
        const controller = (v.controller ??= { env: [{ name: 'LOG_LEVEL', value: 'debug' }] }) as {
          env: { name: string; value: string }[]
        }
        controller.env.push({ name, value: s })
      }),
    )
  }
  {
    const s = secret()
    add('extraEnv pair', s, (f) => inValues(f, (v) => (v.extraEnv = [{ name: 'MY_SECRET', value: s }])))
  }
  {
    const s = secret()
    add('AWS tag {Key, Value} pair', s, (f) => {
      const c = f.eks.cluster
      assert.ok(c.ok && c.value)
      c.value.tags = { ...c.value.tags, 'db-password': s }
    })
  }

  // ---- by shape, whatever the key ----
  {
    const body = pemBody()
    const pem = `-----BEGIN RSA PRIVATE KEY-----\n${body}\n-----END RSA PRIVATE KEY-----\n`
    add('PEM private key', body, (f) => inValues(f, (v) => (v.extraObjects = [{ data: { 'key.pem': pem } }])))
  }
  {
    const body = pemBody()
    const pem = `-----BEGIN PRIVATE KEY-----\n${body}\n-----END PRIVATE KEY-----\n`
    const encoded = b64(pem)
    add('base64 PEM (the encoding)', encoded.slice(8, 60), (f) =>
      inValues(f, (v) => (v.webhookCert = { data: encoded })),
    )
    add('base64 PEM (decoded body)', body, () => {})
  }
  {
    const body = pemBody()
    add('PGP private key block', body, (f) =>
      inValues(f, (v) => {
        v.gpg = {
          key: `-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQdGBF${body}\n=abcd\n-----END PGP PRIVATE KEY BLOCK-----`,
        }
      }),
    )
  }
  {
    const body = pemBody()
    add('OpenSSH private key', body, (f) =>
      inValues(f, (v) => {
        v.git = {
          sshKeyContents: `-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbn${body}\n-----END OPENSSH PRIVATE KEY-----`,
        }
      }),
    )
  }
  {
    const s = secret()
    add('postgres URL with user:password', s, (f) =>
      inValues(f, (v) => (v.databaseUrl = `postgres://karpenter:${s}@db.internal:5432/k`)),
    )
  }
  {
    const s = secret()
    add('HTTPS_PROXY env pair with userinfo', s, (f) =>
      inValues(
        f,
        (v) => (v.proxy = { env: [{ name: 'HTTPS_PROXY', value: `http://proxyuser:${s}@proxy:3128` }] }),
      ),
    )
  }
  {
    const s = secret()
    add('token as the URL user', s, (f) =>
      inValues(f, (v) => (v.chartRepo = `https://${s}@github.com/org/charts.git`)),
    )
  }
  {
    const s = secret()
    add(
      'URL userinfo inside the controller env',
      s,
      (f) => (deploymentEnv(f).HTTP_PROXY = `http://u:${s}@10.0.0.1:3128`),
    )
  }
  {
    const auth = b64(`robot:${secret()}`)
    add('dockerconfig auth (JSON text)', auth, (f) =>
      inValues(f, (v) => (v.registryConfig = JSON.stringify({ auths: { 'ghcr.io': { auth } } }))),
    )
  }
  {
    const auth = b64(`robot:${secret()}`)
    add('dockerconfig auth (object)', auth, (f) =>
      inValues(f, (v) => (v.pullConfig = { auths: { 'ghcr.io': { username: 'robot', auth } } })),
    )
  }
  {
    const auth = b64(`robot:${secret()}`)
    const config = b64(JSON.stringify({ auths: { 'ghcr.io': { auth } } }))
    add('base64 .dockerconfigjson', config.slice(10, 50), (f) =>
      inValues(f, (v) => (v.imagePull = { data: config })),
    )
  }
  {
    const s = secret()
    const kubeconfig = `apiVersion: v1\nkind: Config\nusers:\n- name: ci\n  user:\n    token: ${s}\n`
    add('bearer token inside kubeconfig text', s, (f) => inValues(f, (v) => (v.kubeconfigText = kubeconfig)))
  }
  {
    const s = secret()
    add('Authorization: Bearer in an annotation', s, (f) => {
      const sa = f.kube.serviceAccount
      assert.ok(sa.ok && sa.value)
      sa.value.metadata.annotations = {
        ...sa.value.metadata.annotations,
        'example.com/probe': `Authorization: Bearer ${s}`,
      }
    })
  }
  {
    const s = `eyJhbGciOiJSUzI1NiIsImtpZCI6IjEifQ.eyJzdWIiOiJzeXN0ZW06c2VydmljZWFjY291bnQ${secret('Q')}.c2lnbmF0dXJlX2Zvcl90ZXN0`
    add('JWT', s, (f) => inValues(f, (v) => (v.note = `the service account token is ${s}`)))
  }
  {
    const s = `k8s-aws-v1.aHR0cHM6Ly9zdHMuYW1hem9uYXdzLmNvbS8_QWN0aW9u${secret('X')}`
    add('aws eks get-token token', s, (f) => (deploymentEnv(f).WEBHOOK_PROBE = s))
  }
  {
    const s = 'AKIAZ7Q3EXAMPLE4Q2XY'
    add('AWS access key id in free text', s, (f) =>
      inValues(f, (v) => (v.comment = `rotated ${s} last week`)),
    )
  }
  {
    const s = `ghp_${secret('A')}abcdefghij`
    add('GitHub token', s, (f) => inValues(f, (v) => (v.ci = { note: `use ${s}` })))
  }
  {
    const s = secret()
    add('password=… inside a connection string', s, (f) =>
      inValues(f, (v) => (v.db = `Server=db;User Id=k;Password=${s};Database=x`)),
    )
  }
  {
    const s = secret()
    add('export X_TOKEN=… in EC2NodeClass userData', s, (f) => {
      userData(f, `#!/bin/bash\nexport BOOTSTRAP_TOKEN=${s}\n/etc/eks/bootstrap.sh demo\n`)
    })
  }
  {
    const s = secret()
    add('--password flag in userData', s, (f) => {
      userData(f, `#!/bin/bash\nmount-secrets --password ${s}\n`)
    })
  }
  {
    const s = secret()
    add('Basic auth header in text', b64(`admin:${s}`), (f) =>
      inValues(f, (v) => (v.probe = `curl -H 'Authorization: Basic ${b64(`admin:${s}`)}' http://x`)),
    )
  }
  {
    const s = `xoxb-${secret('1')}-abcdef`
    add('Slack token', s, (f) => inValues(f, (v) => (v.alerts = { webhookNote: `bot ${s}` })))
  }
  {
    const s = `sha256~${secret('T')}abcdefghij`
    add('OAuth sha256~ token', s, (f) => inValues(f, (v) => (v.oauth = s)))
  }
  {
    const s = secret()
    add('.env text block', s, (f) =>
      inValues(f, (v) => (v.dotenv = `LOG_LEVEL=info\nREDIS_PASSWORD=${s}\nPORT=80\n`)),
    )
  }
  {
    const s = secret()
    add('YAML text with a password line', s, (f) =>
      inValues(f, (v) => (v.configYaml = `db:\n  host: x\n  password: "${s}"\n`)),
    )
  }
  {
    const s = secret()
    add('JSON text with an apiKey', s, (f) =>
      inValues(f, (v) => (v.configJson = JSON.stringify({ apiKey: s, region: 'x' }))),
    )
  }
  {
    const s = secret()
    add('annotation key naming a token', s, (f) => {
      const sa = f.kube.serviceAccount
      assert.ok(sa.ok && sa.value)
      sa.value.metadata.annotations = { ...sa.value.metadata.annotations, 'example.com/apiToken': s }
    })
  }
  {
    const s = secret()
    add('Pod Identity / IRSA web identity token env pair', s, (f) =>
      inValues(f, (v) => (v.podEnv = [{ name: 'AWS_CONTAINER_AUTHORIZATION_TOKEN', value: s }])),
    )
  }
  {
    const s = secret()
    add('kube server URL with user:password', s, (f) => {
      f.meta.kubeServer = `https://admin:${s}@EXAMPLE.gr7.us-west-2.eks.amazonaws.com`
      f.meta.notes.push(
        `kube context "demo" points at https://admin:${s}@EXAMPLE.gr7.us-west-2.eks.amazonaws.com, not at EKS cluster demo`,
      )
    })
  }
  {
    const s = secret()
    add('userinfo in a read failure message', s, (f) => {
      f.kube.webhooks = {
        ok: false,
        error: {
          code: 'ECONNRESET',
          kind: 'network',
          message: `socket hang up (proxy http://u:${s}@p:3128)`,
          read: 'webhooks',
        },
      }
    })
  }
  providerTokens(add)
  moreShapes(add)
  return plants
}

type Add = (shape: string, s: string, plant: (f: Facts) => void) => void

/** Provider tokens by their well-known prefixes, each in free text where a key would not give it away. */
function providerTokens(add: Add): void {
  const tokens: [string, string][] = [
    ['AWS temporary access key id (ASIA)', `ASIA${fake(16, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567')}`],
    ['GitHub OAuth token gho_', `gho_${fake(36)}`],
    ['GitHub app token ghs_', `ghs_${fake(36)}`],
    ['GitHub refresh token ghr_', `ghr_${fake(36)}`],
    ['GitHub fine-grained PAT', `github_pat_11${fake(20)}_${fake(59)}`],
    ['GitLab PAT', `glpat-${fake(20)}`],
    ['GitLab pipeline trigger token', `glptt-${fake(40, HEX)}`],
    ['Slack bot token', `xoxb-${fake(12, '0123456789')}-${fake(13, '0123456789')}-${fake(24)}`],
    ['Slack user token', `xoxp-${fake(12, '0123456789')}-${fake(12, '0123456789')}-${fake(32, HEX)}`],
    ['Slack app token', `xapp-1-A${fake(10)}-${fake(13, '0123456789')}-${fake(64, HEX)}`],
    ['Slack webhook URL', `https://hooks.slack.com/services/T${fake(8)}/B${fake(10)}/${fake(24)}`],
    ['Stripe live secret key', `sk_live_${fake(24)}`],
    ['Stripe test secret key', `sk_test_${fake(24)}`],
    ['Stripe restricted key', `rk_live_${fake(24)}`],
    ['Stripe webhook secret', `whsec_${fake(32)}`],
    ['npm token', `npm_${fake(36)}`],
    ['OpenAI key', `sk-${fake(20)}T3BlbkFJ${fake(20)}`],
    ['OpenAI project key', `sk-proj-${fake(48)}`],
    ['Anthropic key', `sk-ant-api03-${fake(93)}AA`],
    ['Google API key', `AIza${fake(35)}`],
    ['Google OAuth access token', `ya29.${fake(60)}`],
    ['Google OAuth client secret', `GOCSPX-${fake(28)}`],
    ['SendGrid key', `SG.${fake(22)}.${fake(43)}`],
    ['Vault service token', `hvs.${fake(90)}`],
    ['Vault batch token', `hvb.${fake(90)}`],
    ['Vault legacy token', `s.${fake(24)}`],
    ['Twilio API key', `SK${fake(32, HEX)}`],
    ['Mailgun key', `key-${fake(32)}`],
    ['Mailchimp key', `${fake(32, HEX)}-us14`],
    ['DigitalOcean token', `dop_v1_${fake(64, HEX)}`],
    ['PyPI token', `pypi-AgEIcHlwaS5vcmc${fake(60)}`],
    ['Shopify token', `shpat_${fake(32, HEX)}`],
    ['Square token', `sq0atp-${fake(22)}`],
    ['Databricks token', `dapi${fake(32, HEX)}`],
    ['Atlassian token', `ATATT3xFfGF0${fake(40)}`],
    ['New Relic key', `NRAK-${fake(27, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789')}`],
    ['Docker Hub PAT', `dckr_pat_${fake(27)}`],
    ['Hugging Face token', `hf_${fake(34, 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ')}`],
    ['Linear key', `lin_api_${fake(40)}`],
    ['bare AWS secret access key', `${fake(18)}/${fake(10)}+${fake(8)}Q7`],
    [
      'AWS session token (IQoJ…)',
      `IQoJb3JpZ2luX2VjE${fake(300, 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/+')}`,
    ],
    ['AWS session token (FwoG…)', `FwoGZXIvYXdzE${fake(200)}`],
    ['Azure storage AccountKey in a connection string', `${fake(86)}==`],
  ]
  for (const [shape, token] of tokens) {
    const text = shape.startsWith('Azure')
      ? `DefaultEndpointsProtocol=https;AccountName=demo;AccountKey=${token};EndpointSuffix=core.windows.net`
      : `rotated ${token} last week`
    add(shape, token, (f) => inValues(f, (v) => (v[`note${shape.replace(/\W/g, '')}`] = text)))
  }
}

/** Encodings, key spellings, command lines and the last-applied-configuration annotation. */
function moreShapes(add: Add): void {
  {
    const s = fake(40)
    add('Azure SAS sig= in a URL', s, (f) =>
      inValues(f, (v) => (v.blobUrl = `https://demo.blob.core.windows.net/c?sv=2022-11-02&se=2030&sig=${s}`)),
    )
  }
  {
    const s = fake(44)
    add('Azure Service Bus SharedAccessKey', s, (f) =>
      inValues(
        f,
        (v) =>
          (v.bus = `Endpoint=sb://demo.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey=${s}`),
      ),
    )
  }
  {
    const s = secret()
    add('URL-encoded password=', s, (f) => inValues(f, (v) => (v.form = `user%3Dk%26password%3D${s}`)))
  }
  {
    const s = secret()
    add('URL-encoded URL with userinfo', s, (f) =>
      inValues(f, (v) => (v.redirect = encodeURIComponent(`postgres://k:${s}@db:5432/x`))),
    )
  }
  {
    const s = secret()
    const twice = b64(b64(`{"password": "${s}"}`))
    add('base64 of base64 of a password', twice.slice(4, 40), (f) => inValues(f, (v) => (v.blob = twice)))
  }
  {
    const s = `AKIA${fake(16, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567')}`
    const twice = b64(b64(`aws_access_key_id = ${s}`))
    add('base64 of base64 of an access key', twice.slice(4, 40), (f) => inValues(f, (v) => (v.blob2 = twice)))
  }
  for (const key of [
    'pass_phrase',
    'sessionKey',
    'Passwort',
    'contraseña',
    'mot_de_passe',
    'senha',
    'пароль',
    'masterKey',
    'AccountKey',
  ]) {
    const s = secret()
    add(`key ${key}`, s, (f) => inValues(f, (v) => (v[key] = s)))
  }
  {
    const s = secret()
    add('mysql -p<password> in userData', s, (f) => userData(f, `mysql -u root -p${s} -h db -e 'select 1'\n`))
  }
  {
    const s = secret()
    add('--password=… in userData', s, (f) => userData(f, `vault login --password=${s}\n`))
  }
  {
    const s = secret()
    add('echo … | docker login --password-stdin in userData', s, (f) =>
      userData(f, `echo "${s}" | docker login -u AWS --password-stdin 1.dkr.ecr.us-west-2.amazonaws.com\n`),
    )
  }
  {
    const s = secret()
    add('docker login --password-stdin <<< … in userData', s, (f) =>
      userData(f, `docker login -u ci --password-stdin registry.example.com <<< '${s}'\n`),
    )
  }
  {
    const s = secret()
    add('last-applied-configuration annotation', s, (f) => {
      const sa = f.kube.serviceAccount
      assert.ok(sa.ok && sa.value)
      const applied = {
        apiVersion: 'v1',
        kind: 'Secret',
        stringData: { password: s },
        data: { token: b64(s) },
      }
      sa.value.metadata.annotations = {
        ...sa.value.metadata.annotations,
        'kubectl.kubernetes.io/last-applied-configuration': JSON.stringify(applied),
      }
    })
  }
}

let dir: string
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'karpctl-corpus-'))
})
after(() => rmSync(dir, { recursive: true, force: true }))

test('the corpus covers every shape the issue names, each with its own secret', () => {
  const plants = corpus()
  assert.ok(plants.length >= 100, `${plants.length} entries`)
  assert.equal(new Set(plants.map((p) => p.secret)).size, plants.length, 'each secret is distinct')
  // The control: planted and not redacted, every secret is in the facts (so the assertions below can fail).
  const facts = healthyFacts((f) => plants.forEach((p) => p.plant(f)))
  const raw = JSON.stringify(facts)
  const missing = plants.filter((p) => !raw.includes(p.secret) && !p.shape.includes('decoded'))
  assert.deepEqual(
    missing.map((p) => p.shape),
    [],
  )
})

test('no secret of the corpus survives in a saved snapshot, or in any report of it', async () => {
  const plants = corpus()
  const path = join(dir, 'snapshot.json')
  await saveSnapshot(
    path,
    healthyFacts((f) => plants.forEach((p) => p.plant(f))),
  )
  const text = readFileSync(path, 'utf8')
  assert.ok(text.includes(REDACTED))
  const loaded = await loadSnapshot(path)
  const found = leaks(plants, { snapshot: text, ...reports(loaded) })
  assert.deepEqual(found, [], `${found.length} leak(s) of ${plants.length} secrets`)
})

test('no secret of the corpus survives in a plan, printed or as --json', () => {
  const plants = corpus()
  const found = leaks(plants, plans(healthyFacts((f) => plants.forEach((p) => p.plant(f)))))
  assert.deepEqual(found, [], `${found.length} leak(s) of ${plants.length} secrets`)
})

test('no secret of the corpus reaches any report of a live run', () => {
  const plants = corpus()
  const facts = healthyFacts((f) => plants.forEach((p) => p.plant(f)))
  // What the collector does: Kubernetes facts are redacted as they are read, and the kube server URL
  // never carries its userinfo (kubeconfig.ts); AWS facts are data karpctl asked for by name.
  facts.kube = redactKubeFacts(facts.kube)
  facts.meta = redact(facts.meta)
  const kubePlants = plants.filter((p) => !p.shape.startsWith('AWS tag'))
  const found = leaks(kubePlants, reports(facts))
  assert.deepEqual(found, [], `${found.length} leak(s)`)
})

test('redaction keeps what the checks read: the same verdicts before and after', () => {
  const facts = healthyFacts()
  const before = runChecks(catalog, facts).map((r) => [r.meta.id, r.status])
  const after = runChecks(catalog, redact(facts)).map((r) => [r.meta.id, r.status])
  assert.deepEqual(after, before)
  assert.ok(!JSON.stringify(redact(facts)).includes(REDACTED), 'a healthy cluster has nothing to redact')
})
