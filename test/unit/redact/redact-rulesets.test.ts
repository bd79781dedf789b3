// The secret scanners' own rule sets as a corpus (issue 36.1): a fake value drawn from each rule's
// regular expression (test/fixtures/secrets/generate.py; no real secret), planted in every kind of field
// karpctl reads, checked in every output. Two halves, reported apart:
//  - gitleaks (config/gitleaks.toml): the half the redactor's rules were tuned on;
//  - trufflehog (pkg/detectors): held back, never looked at while writing the rules; it measures how
//    far the generic rule (src/redact/redact-random.ts) reaches past what it was written from.
// Left out of both, by design, and counted: values in the exact shape of a UUID (Kubernetes uids and
// KMS key ids are UUIDs, and karpctl judges them), values with fewer than 16 letters and digits and no
// secret-named key before them (as short as the names and hashes karpctl prints), all-digit values, and
// draws whose entropy is under 3 bits (a rule's placeholder, such as `XxxxxXXxXx`).
import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { redactKubeFacts } from '../../../src/facts/collect-kube.js'
import { REDACTED, redact, redactText } from '../../../src/redact/redact.js'
import { loadSnapshot, saveSnapshot } from '../../../src/facts/snapshot.js'
import type { Facts } from '../../../src/facts/types.js'
import { healthyFacts } from '../../helpers/facts.js'
import { leaks, plans, reports } from '../../helpers/secret-outputs.js'
import { CORPUS, leftOut, type Entry } from '../../helpers/secret-corpus.js'

/** Where a value is planted: each a field karpctl reads, as a cluster holds it. */
const SITES: [string, (f: Facts, e: Entry, i: number) => void][] = [
  [
    'Helm values, nested',
    (f, e, i) => {
      const v = f.kube.release.ok && f.kube.release.value ? f.kube.release.value.values : {}
      ;((v.vendor ??= {}) as Record<string, unknown>)[`integration${i}`] = { settings: { note: e.text } }
    },
  ],
  [
    'Helm values, a list',
    (f, e) => {
      const v = f.kube.release.ok && f.kube.release.value ? f.kube.release.value.computedValues : {}
      ;((v.extraArgs ??= []) as unknown[]).push(`--vendor=${e.text}`)
    },
  ],
  [
    'Helm values, a multi-line string',
    (f, e) => {
      const v = f.kube.release.ok && f.kube.release.value ? f.kube.release.value.values : {}
      v.script = `${typeof v.script === 'string' ? v.script : '#!/bin/sh\n'}configure \\\n  ${e.text}\n`
    },
  ],
  [
    'controller Deployment env',
    (f, e, i) => {
      if (f.kube.deployment.ok && f.kube.deployment.value) f.kube.deployment.value.env[`VENDOR_${i}`] = e.text
    },
  ],
  [
    'last-applied-configuration',
    (f, e) => {
      if (!(f.kube.serviceAccount.ok && f.kube.serviceAccount.value)) return
      const meta = f.kube.serviceAccount.value.metadata
      const key = 'kubectl.kubernetes.io/last-applied-configuration'
      const prior = meta.annotations?.[key]
      const applied = prior ? (JSON.parse(prior) as { notes: string[] }) : { notes: [] }
      applied.notes.push(e.text)
      meta.annotations = { ...meta.annotations, [key]: JSON.stringify(applied) }
    },
  ],
  [
    'NodePool annotation',
    (f, e, i) => {
      const np = f.kube.nodePools.ok ? f.kube.nodePools.value[0] : undefined
      if (np) np.metadata.annotations = { ...np.metadata.annotations, [`vendor.example.com/n${i}`]: e.text }
    },
  ],
  [
    'NodePool taint',
    (f, e, i) => {
      const spec = f.kube.nodePools.ok ? f.kube.nodePools.value[0]?.spec.template.spec : undefined
      if (spec) (spec.taints ??= []).push({ key: `vendor${i}`, value: e.text, effect: 'NoSchedule' })
    },
  ],
  [
    'EC2NodeClass userData',
    (f, e) => {
      const spec = f.kube.nodeClasses.ok ? (f.kube.nodeClasses.value[0]?.spec as Record<string, unknown>) : {}
      spec.userData = `${typeof spec.userData === 'string' ? spec.userData : ''}echo "${e.text}" >> /etc/vendor\n`
    },
  ],
  [
    'EC2NodeClass tag',
    (f, e, i) => {
      const spec = f.kube.nodeClasses.ok ? f.kube.nodeClasses.value[0]?.spec : undefined
      if (spec) spec.tags = { ...spec.tags, [`vendor-${i}`]: e.text }
    },
  ],
  [
    'NodePool condition message',
    (f, e) => {
      const np = f.kube.nodePools.ok ? f.kube.nodePools.value[0] : undefined
      if (np)
        ((np.status ??= {}).conditions ??= []).push({
          type: 'VendorSynced',
          status: 'False',
          reason: 'Failed',
          message: `vendor sync failed with ${e.text}: retrying`,
        } as never)
    },
  ],
]

function planted(entries: Entry[]): Facts {
  return healthyFacts((f) => entries.forEach((e, i) => SITES[i % SITES.length]![1](f, e, i)))
}

let dir: string
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'karpctl-rulesets-'))
})
after(() => rmSync(dir, { recursive: true, force: true }))

for (const half of ['gitleaks', 'trufflehog'] as const) {
  const all = CORPUS[half]
  const judged = all.filter((e) => leftOut(e) === null)
  const plants = judged.map((e) => ({ shape: e.source, secret: e.secret }))

  test(`${half}: ${judged.length} of ${all.length} shapes judged, each planted where it can be found`, () => {
    assert.ok(judged.length >= (half === 'gitleaks' ? 190 : 850), `${judged.length} judged`)
    // The control: unredacted, each secret is in the facts (so the assertions below can fail).
    const raw = JSON.stringify(planted(judged))
    assert.deepEqual(
      judged.filter((e) => !raw.includes(JSON.stringify(e.secret).slice(1, -1))).map((e) => e.source),
      [],
    )
  })

  test(`${half}: no judged secret survives a saved snapshot or any report of it, nor a plan`, async () => {
    const path = join(dir, `${half}.json`)
    await saveSnapshot(path, planted(judged))
    const text = readFileSync(path, 'utf8')
    assert.ok(text.includes(REDACTED))
    const loaded = await loadSnapshot(path)
    const found = leaks(plants, { snapshot: text, ...reports(loaded), ...plans(planted(judged)) })
    // The gitleaks half is the one the rules were written from: every shape. The held-back half is
    // what the generic rule reaches; the shapes it misses are listed (and must stay few).
    const missed = [...new Set(found.map((f) => f.split(' in ')[0]))]
    if (half === 'gitleaks') assert.deepEqual(found, [], `${missed.length} of ${judged.length} leaked`)
    else
      assert.ok(
        missed.length <= judged.length * 0.02,
        `held back: ${missed.length} of ${judged.length} leaked: ${missed.join(', ')}`,
      )
  })

  test(`${half}: a live run's reports keep none (Kubernetes facts redacted as collected)`, () => {
    const facts = planted(judged)
    facts.kube = redactKubeFacts(facts.kube)
    facts.meta = redact(facts.meta)
    const found = leaks(plants, reports(facts))
    const missed = new Set(found.map((f) => f.split(' in ')[0]))
    assert.ok(missed.size <= (half === 'gitleaks' ? 0 : judged.length * 0.02), [...missed].join(', '))
  })
}

test('the held-back half, measured on its own: redactText of each text alone', () => {
  const rate = (entries: Entry[]) => {
    const judged = entries.filter((e) => leftOut(e) === null)
    const caught = judged.filter((e) => !redactText(`note: ${e.text}\n`).includes(e.secret))
    return { judged: judged.length, caught: caught.length }
  }
  const g = rate(CORPUS.gitleaks)
  const t = rate(CORPUS.trufflehog)
  // Measured when written: gitleaks 198 judged, trufflehog 897 judged (see the report of issue 36).
  assert.ok(t.caught / t.judged >= 0.98, `trufflehog ${t.caught}/${t.judged}`)
  assert.ok(g.caught / g.judged >= 0.96, `gitleaks ${g.caught}/${g.judged}`)
})
