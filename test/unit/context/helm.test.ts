import assert from 'node:assert/strict'
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import {
  findHelm,
  HELM_MARKER,
  helmAt,
  helmMarker,
  helmMessage,
  helmLeftAfter,
  helmProcessesFor,
  parseHelmVersion,
} from '../../../src/context/helm.js'

function fakeHelm(version: string, upgrade = 'exit 0'): { bin: string; argsFile: string; stdinFile: string } {
  const dir = mkdtempSync(join(tmpdir(), 'karpctl-helm-'))
  const bin = join(dir, 'helm')
  const argsFile = join(dir, 'args')
  const stdinFile = join(dir, 'stdin')
  writeFileSync(
    bin,
    `#!/bin/sh\nif [ "$1" = version ]; then echo '${version}'; exit 0; fi\necho "$@" > ${argsFile}\ncat > ${stdinFile}\n${upgrade}\n`,
  )
  chmodSync(bin, 0o755)
  return { bin, argsFile, stdinFile }
}

test('helm version and error parsing', () => {
  assert.deepEqual(parseHelmVersion('v3.22.0'), [3, 22, 0])
  assert.equal(parseHelmVersion('garbage'), null)
  assert.equal(
    helmMessage('walk.go:75: found symbolic link\nError: INSTALLATION FAILED: cannot patch "x": boom\n'),
    'INSTALLATION FAILED: cannot patch "x": boom',
  )
  // A template or schema error quoting the user's values: redacted as snapshots are.
  const leaked = helmMessage(
    'Error: UPGRADE FAILED: template: karpenter/templates/x.yaml: password: hunter2, key AKIAIOSFODNN7EXAMPLE\n',
  )
  assert.doesNotMatch(leaked, /hunter2|AKIAIOSFODNN7EXAMPLE/)
  assert.match(leaked, /^UPGRADE FAILED: template: karpenter\/templates\/x\.yaml: password: \[REDACTED\]/)
})

test('a missing or old helm is one clear error before anything is changed', async () => {
  await assert.rejects(
    findHelm({ bin: '/nonexistent/helm' }),
    /helm not found \(\/nonexistent\/helm\): install Helm 3.8 or newer/,
  )
  await assert.rejects(
    findHelm({ bin: fakeHelm('v3.7.2').bin }),
    /helm v3.7.2 is not supported: karpctl needs Helm 3.8 or newer/,
  )
  await assert.rejects(findHelm({ bin: fakeHelm('v4.0.0').bin }), /not supported/)
})

test('KARPCTL_HELM that is not helm names the file and what it did (issue 20.6)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'karpctl-nothelm-'))
  const prog = (name: string, body: string) => {
    const bin = join(dir, name)
    writeFileSync(bin, `#!/bin/sh\n${body}\n`)
    chmodSync(bin, 0o755)
    return bin
  }
  const silent = prog('silent', 'exit 0')
  await assert.rejects(findHelm({ bin: silent }), {
    message: `"${silent}" is not helm: \`version\` printed nothing, not a Helm version: set KARPCTL_HELM to a Helm 3.8+ binary, or unset it to use \`helm\` on the PATH`,
  })
  await assert.rejects(
    findHelm({ bin: prog('chatty', 'printf "usage: kubectl \\033[2J [flags]"') }),
    /chatty" is not helm: `version` printed "usage: kubectl \\u001b\[2J \[flags\]", not a Helm version: /,
  )
  await assert.rejects(
    findHelm({ bin: prog('fails', 'exit 3') }),
    /fails" exited with code 3 from `version` and printed nothing: /,
  )
  await assert.rejects(
    findHelm({ bin: prog('says', 'echo "Error: boom" >&2; exit 1') }),
    /says" exited with code 1 from `version` and printed "boom": /,
  )
  const data = join(dir, 'data')
  writeFileSync(data, 'not a program')
  chmodSync(data, 0o644)
  await assert.rejects(
    findHelm({ bin: data }),
    /data" cannot be run \(EACCES\): it is not an executable program/,
  )
  await assert.rejects(
    findHelm({ bin: prog('dies', 'kill -KILL $$') }),
    /dies" was killed by SIGKILL running `version`: /,
  )
})

test("upgrade --install passes chart, version, namespace, values on stdin, karpctl labels and the kube context; failure shows helm's words", async () => {
  const ok = fakeHelm('v3.22.0')
  const h = await findHelm({ bin: ok.bin, kubeContext: 'ctx' })
  // Issue 36.3: the values (secrets included) reach helm on its standard input, never through a file.
  const values = 'settings:\n  clusterName: demo\nwebhook:\n  password: s3cr3t\n'
  await h.upgradeInstall({
    release: 'karpenter',
    chart: 'oci://public.ecr.aws/karpenter/karpenter',
    version: '1.14.1',
    namespace: 'kube-system',
    values,
    labels: { 'karpctl.io/managed-by': 'karpctl' },
  })
  assert.equal(
    readFileSync(ok.argsFile, 'utf8').trim(),
    'upgrade --install karpenter oci://public.ecr.aws/karpenter/karpenter --version 1.14.1 --namespace kube-system --create-namespace --values - --labels karpctl.io/managed-by=karpctl --kube-context ctx',
  )
  assert.equal(readFileSync(ok.stdinFile, 'utf8'), values)
  const bad = await findHelm({
    bin: fakeHelm('v3.22.0', 'echo "Error: UPGRADE FAILED: timed out" >&2; exit 1').bin,
  })
  await assert.rejects(
    bad.upgradeInstall({ release: 'k', chart: 'c', namespace: 'n', values: '', labels: {} }),
    /helm upgrade --install k failed: UPGRADE FAILED: timed out/,
  )
})

/** A fake /proc: each pid's argv and environment, NUL-separated as Linux writes them (null: unreadable). */
function fakeProc(procs: Record<number, { argv: string[]; env: Record<string, string> | null }>): string {
  const root = mkdtempSync(join(tmpdir(), 'karpctl-proc-'))
  for (const [pid, p] of Object.entries(procs)) {
    const dir = join(root, pid)
    mkdirSync(dir)
    writeFileSync(join(dir, 'cmdline'), `${p.argv.join('\0')}\0`)
    // Another user's process: its environ exists but cannot be read (a directory stands in for EACCES).
    if (p.env === null) mkdirSync(join(dir, 'environ'))
    else
      writeFileSync(
        join(dir, 'environ'),
        Object.entries(p.env)
          .map(([k, v]) => `${k}=${v}\0`)
          .join(''),
      )
  }
  writeFileSync(join(root, 'uptime'), '1 1')
  return root
}

test("helm processes at a release: karpctl's by its marker (this cluster only), another helm by release, namespace and context; never another user's", async () => {
  const us = {
    cluster: 'https://127.0.0.1:6443',
    namespace: 'kube-system',
    release: 'karpenter',
    kubeContext: 'ours',
  }
  const marker = (cluster: string, release = 'karpenter') => ({
    [HELM_MARKER]: helmMarker({ cluster, namespace: 'kube-system', release }),
  })
  const upgrade = [
    '/usr/local/bin/helm',
    'upgrade',
    '--install',
    'karpenter',
    'oci://x',
    '--namespace',
    'kube-system',
  ]
  const proc = fakeProc({
    // A helm karpctl started for this cluster's release (and one whose args say nothing of it).
    101: { argv: upgrade, env: marker(us.cluster) },
    102: { argv: ['helm', 'rollback', 'karpenter', '3'], env: marker(us.cluster) },
    // karpctl's helm at another cluster's release of the same name, with the same args.
    103: { argv: upgrade, env: marker('https://10.0.0.9:443') },
    // karpctl's helm at this cluster's karpenter-crd release.
    104: {
      argv: ['helm', 'upgrade', '--install', 'karpenter-crd'],
      env: marker(us.cluster, 'karpenter-crd'),
    },
    // Another user's helm at a release named karpenter: its environment is not ours to read.
    105: { argv: upgrade, env: null },
    // The user's own helm in another terminal: this release, namespace and context…
    106: { argv: [...upgrade, '--kube-context=ours'], env: { HOME: '/home/u' } },
    // …in another namespace, or another context (flag or HELM_KUBECONTEXT): another release.
    107: { argv: ['helm', 'upgrade', 'karpenter', 'oci://x', '-n', 'karpenter'], env: {} },
    108: { argv: [...upgrade, '--kube-context', 'theirs'], env: {} },
    109: { argv: upgrade, env: { HELM_KUBECONTEXT: 'theirs' } },
    // Not helm at all, though it names the release.
    110: { argv: ['vim', 'karpenter'], env: marker(us.cluster) },
  })
  assert.deepEqual((await helmProcessesFor(us, proc))?.sort(), [101, 102, 106])
  assert.deepEqual(await helmProcessesFor({ ...us, release: 'karpenter-crd' }, proc), [104])
  assert.deepEqual(await helmProcessesFor({ ...us, cluster: 'https://10.0.0.9:443' }, proc), [103, 106])
  // No /proc and no ps: cannot tell (the plan then refuses to undo the pending operation).
  assert.equal(await helmProcessesFor(us, '/nonexistent/proc', '/nonexistent/ps'), null)
})

test('helmAt: argv forms of namespace and context', () => {
  const t = { cluster: 'c', namespace: 'karpenter', release: 'karpenter', kubeContext: 'ctx' }
  assert.ok(helmAt(['helm', 'upgrade', 'karpenter', 'x', '--namespace=karpenter'], {}, t))
  assert.ok(helmAt(['helm', 'upgrade', 'karpenter', 'x'], { HELM_NAMESPACE: 'karpenter' }, t))
  // No namespace: helm's default one.
  assert.ok(!helmAt(['helm', 'upgrade', 'karpenter', 'x'], {}, t))
  assert.ok(!helmAt(['/opt/helm-3.14/helm', 'rollback', 'karpenter-other', '-n', 'karpenter'], {}, t))
  assert.ok(helmAt(['/opt/helm-3.14/helm', 'rollback', 'karpenter', '-n', 'karpenter'], {}, t))
})

// Issue 36.3: a re-run after SIGKILL finds the killed run's helm still finishing at its release; it waits
// for it (bounded) instead of stopping on it.
test('helmLeftAfter: asks again until no helm is left, stops at once on null, gives up at the bound', async () => {
  let t = 0
  const clock = { now: () => t, sleep: async (ms: number) => void (t += ms) }
  const answers = [[7], [7], []]
  let asked = 0
  assert.deepEqual(await helmLeftAfter(async () => answers[asked++] ?? [], 10_000, clock), [])
  assert.equal(asked, 3, 'asked until the helm was gone')
  assert.equal(t, 500)

  asked = 0
  assert.equal(await helmLeftAfter(async () => (asked++, null), 10_000, clock), null)
  assert.equal(asked, 1, 'null (cannot tell) is not waited on')

  t = 0
  asked = 0
  assert.deepEqual(await helmLeftAfter(async () => (asked++, [9]), 1_000, clock), [9])
  assert.equal(t, 1_000, 'gave up at the bound, still running: the caller blocks on it')
  assert.equal(asked, 5)
})
