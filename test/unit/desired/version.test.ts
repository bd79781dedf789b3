import assert from 'node:assert/strict'
import { test } from 'node:test'
import { cmpVersion, parseVersion, type KarpenterVersion } from '../../../src/desired/version.js'

test('a version is three numbers at the start, with an optional v; anything else is none', () => {
  assert.deepEqual(parseVersion('v1.14.1'), { raw: 'v1.14.1', major: 1, minor: 14, patch: 1 })
  assert.deepEqual(parseVersion('10.2.3-rc.1'), { raw: '10.2.3-rc.1', major: 10, minor: 2, patch: 3 })
  for (const bad of ['x1.2.3', '1.2', 'latest', '', undefined])
    assert.equal(parseVersion(bad), null, String(bad))
})

test('versions order by major, then minor, then patch', () => {
  const v = (s: string) => parseVersion(s) as KarpenterVersion
  assert.ok(cmpVersion(v('1.2.3'), v('1.2.5')) < 0)
  assert.ok(cmpVersion(v('1.10.0'), v('1.9.9')) > 0)
  assert.ok(cmpVersion(v('2.0.0'), v('1.99.99')) > 0)
  assert.equal(cmpVersion(v('v1.2.3'), v('1.2.3')), 0)
})
