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
