import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { Config } from '@oclif/core'
import { versionLine } from '../../../src/boot/main.js'
import { repoRoot } from '../../helpers/fixtures.js'

test("boot's --version line is oclif's userAgent, word for word", async () => {
  const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
    name: string
    version: string
  }
  const config = await Config.load(repoRoot)
  assert.equal(await versionLine(pkg.name, pkg.version), config.userAgent)
  // Not a constant: the name and version are the build's.
  assert.match(await versionLine('other', '9.9.9'), /^other\/9\.9\.9 \S+-\S+ node-v\d+/)
})

test("boot's engines check: older than package.json's minimum, compared part by part", async () => {
  const { olderThan } = await import('../../../src/boot/main.js')
  const min = [20, 12, 0]
  assert.equal(olderThan('20.11.1', min), true)
  assert.equal(olderThan('18.20.4', min), true)
  assert.equal(olderThan('20.12.0', min), false)
  assert.equal(olderThan('20.20.2', min), false)
  assert.equal(olderThan('22.0.0', min), false)
  // Numbers, not strings: 20.9 is older than 20.12.
  assert.equal(olderThan('20.9.0', min), true)
  // This Node runs the tests: it satisfies package.json's engines, as the CLI requires.
  const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
    engines: { node: string }
  }
  const [, ...parts] = /^>=(\d+)\.(\d+)/.exec(pkg.engines.node) ?? []
  assert.equal(olderThan(process.versions.node, parts.map(Number)), false)
})
