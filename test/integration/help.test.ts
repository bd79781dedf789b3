// karpctl's help class (src/help.ts) skips EJS for text without a template: every help screen must
// still be oclif's own, word for word, at any width.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { createRequire } from 'node:module'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { Config, Help } from '@oclif/core'
import KarpctlHelp, { quickRender } from '../../src/help.js'
import { repoRoot } from '../helpers/fixtures.js'

/** One help screen, on a configuration of its own: oclif's Help keeps state in it between screens. */
async function screen(HelpClass: typeof Help, argv: string[], width: number) {
  const config = await Config.load(repoRoot)
  const out: string[] = []
  const write = process.stdout.write
  process.stdout.write = ((chunk: string) => out.push(String(chunk)) > 0) as typeof process.stdout.write
  try {
    await new HelpClass(config, { ...config.pjson.oclif.helpOptions, maxWidth: width }).showHelp(argv)
  } finally {
    process.stdout.write = write
  }
  return out.join('')
}

test("every help screen is oclif's own: root, each topic and each command, at 60, 80 and 200 columns", async () => {
  const config = await Config.load(repoRoot)
  const screens = [[], ...config.topics.map((t) => [t.name]), ...config.commands.map((c) => c.id.split(':'))]
  assert.ok(config.commands.length >= 6, 'the manifest lists the commands')
  for (const argv of screens)
    for (const width of [60, 80, 200]) {
      const ours = await screen(KarpctlHelp, argv, width)
      assert.ok(ours.length > 100, `karpctl ${argv.join(' ')} --help printed a screen`)
      assert.equal(ours, await screen(Help, argv, width), `karpctl ${argv.join(' ')} --help at ${width}`)
    }
})

test("the bundle's oclif lists the commands in oclif's order (the build swaps its sort's comparator)", async () => {
  const require = createRequire(import.meta.url)
  const bundled = require(join(repoRoot, 'dist', 'cli.js')) as { Config: typeof Config }
  const ids = (c: Config) => c.commands.map((x) => x.id)
  const ours = await bundled.Config.load(repoRoot)
  assert.notEqual(bundled.Config, Config, "the bundle's own oclif")
  assert.deepEqual(ids(ours), ids(await Config.load(repoRoot)))
  assert.deepEqual(
    ours.plugins.get('karpctl')?.commands.map((x) => x.id),
    ids(ours),
  )
})

test("the built CLI prints oclif's own screens, rendered by the bundle and then from the cache", async () => {
  const config = await Config.load(repoRoot)
  const screens = [[], ...config.topics.map((t) => [t.name]), ...config.commands.map((c) => c.id.split(':'))]
  const cache = mkdtempSync(join(tmpdir(), 'karpctl-help-built-'))
  try {
    for (const argv of screens) {
      const expected = await screen(Help, argv, 80)
      // Twice: rendered by the bundle, then printed from the help-screen cache.
      for (const pass of ['rendered', 'cached']) {
        const r = spawnSync(process.execPath, [join(repoRoot, 'bin', 'run.js'), ...argv, '--help'], {
          encoding: 'utf8',
          env: { PATH: process.env.PATH, HOME: cache, XDG_CACHE_HOME: cache },
        })
        assert.equal(r.status, 0, r.stderr)
        assert.equal(r.stdout, expected, `karpctl ${argv.join(' ')} --help, ${pass}`)
      }
    }
  } finally {
    rmSync(cache, { recursive: true, force: true })
  }
})

test('a template with other tags than the bin and the command id goes to EJS', () => {
  const seen: string[] = []
  const render = quickRender(
    (t) => (seen.push(t), 'ejs'),
    () => ({ bin: 'k<&>', id: 'a"b' }),
  )
  assert.equal(render('plain text'), 'plain text')
  assert.equal(render('<%= config.bin %> <%= command.id %> x'), 'k&lt;&amp;&gt; a&#34;b x')
  assert.equal(render('<%= config.bin %> <%- 1 + 1 %>'), 'ejs')
  assert.deepEqual(seen, ['<%= config.bin %> <%- 1 + 1 %>'])
  // No command in the context (the root help): its id is EJS's to resolve.
  assert.equal(
    quickRender(
      () => 'ejs',
      () => ({ bin: 'k' }),
    )('<%= command.id %>'),
    'ejs',
  )
})
