// The in-cluster pieces that are not TypeScript: the chart's Deployment must only pass flags doctor
// has, and the Dockerfile (not built here: no registry) is linted by reading it — the official Node 20
// base image, every COPY source present and not excluded by .dockerignore, an unprivileged user, and
// the files the CLI runs from in the final stage.
import assert from 'node:assert/strict'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { parse } from 'yaml'
import { BaseCommand } from '../../../src/base-command.js'
import Doctor from '../../../src/commands/doctor.js'

const ROOT = join(import.meta.dirname, '../../..')
const read = (p: string) => readFileSync(join(ROOT, p), 'utf8')

test("every flag the chart's Deployment passes is a flag of karpctl doctor", () => {
  const args = [
    ...read('charts/karpctl-doctor/templates/deployment.yaml').matchAll(/^\s*- (--[a-z-]+)/gm),
  ].map((m) => (m[1] as string).slice(2))
  assert.ok(args.includes('serve') && args.includes('interval') && args.includes('listen'))
  const known = new Set([...Object.keys(Doctor.flags), ...Object.keys(BaseCommand.baseFlags)])
  for (const a of args) {
    const name = a.startsWith('no-') && !known.has(a) ? a.slice(3) : a
    assert.ok(known.has(name), `--${a} is not a doctor flag`)
  }
})

test('values.yaml documents what the templates read', () => {
  const values = parse(read('charts/karpctl-doctor/values.yaml')) as Record<string, unknown>
  const templates = [
    'deployment',
    'serviceaccount',
    'clusterrole',
    'service',
    'servicemonitor',
    'prometheusrule',
  ]
    .map((t) => read(`charts/karpctl-doctor/templates/${t}.yaml`))
    .join('\n')
  for (const m of templates.matchAll(/\.Values\.([A-Za-z]+)/g))
    assert.ok((m[1] as string) in values, `.Values.${m[1]} is not in values.yaml`)
})

interface Stage {
  from: string
  lines: string[]
}

function stages(text: string): Stage[] {
  const out: Stage[] = []
  for (const raw of text.split('\n')) {
    const l = raw.trim()
    if (!l || l.startsWith('#')) continue
    const from = /^FROM\s+(\S+)/i.exec(l)
    if (from) out.push({ from: from[1] as string, lines: [] })
    else out.at(-1)?.lines.push(l)
  }
  return out
}

test('the Dockerfile builds on the official Node.js 20 image and runs as an unprivileged user', () => {
  const s = stages(read('Dockerfile'))
  assert.ok(s.length >= 2)
  for (const st of s) assert.match(st.from, /^node:20(-[a-z]+)*(@sha256:[0-9a-f]{64})?$/, st.from)
  const last = s.at(-1) as Stage
  const user = last.lines.filter((l) => /^USER\s/i.test(l)).at(-1)
  assert.ok(user && !/^USER\s+(root|0)\b/i.test(user), 'the final stage runs as root')
  assert.match(last.lines.find((l) => l.startsWith('ENTRYPOINT')) ?? '', /bin\/run\.js/)
})

test("the Dockerfile's COPY sources exist, are not ignored, and the final stage has what the CLI runs from", () => {
  const ignored = read('.dockerignore')
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
  const s = stages(read('Dockerfile'))
  for (const st of s)
    for (const l of st.lines) {
      const m = /^COPY\s+(?!--from)(.+)\s+\S+$/.exec(l)
      if (!m) continue
      for (const src of (m[1] as string).split(/\s+/)) {
        assert.ok(existsSync(join(ROOT, src)), `COPY ${src}: no such file in the repository`)
        assert.ok(!ignored.includes(src), `COPY ${src}: .dockerignore leaves it out`)
      }
    }
  const final = (s.at(-1) as Stage).lines.join('\n')
  // What package.json's `files` ships, minus the examples: the CLI's runtime.
  for (const f of ['bin', 'dist', 'oclif.manifest.json', 'schema', 'node_modules', 'package.json'])
    assert.match(final, new RegExp(`COPY --from=build /src/${f.replace('.', '\\.')} `), `${f} is not copied`)
})
