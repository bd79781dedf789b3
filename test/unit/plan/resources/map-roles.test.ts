// aws-auth's mapRoles edited as text (plan/resources/map-roles.ts): how the list style is read from
// the text, why a text cannot take an edit, and the exact text an add or a remove leaves.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import {
  mapRoles,
  mapRolesProblem,
  styleOf,
  withMapRole,
  withoutMapRole,
} from '../../../../src/plan/resources/map-roles.js'

// Kills: the `??`/split on the parser's message (only its first line is kept, whole).
test('mapRolesProblem: invalid YAML names the first line of the parser error; a map is not a list', () => {
  assert.equal(
    mapRolesProblem('- rolearn: [unclosed\n'),
    'is not valid YAML (Flow sequence in block collection must be sufficiently indented and end with a ] at line 2, column 1:)',
  )
  assert.equal(mapRolesProblem('rolearn: x\n'), 'is not a YAML list')
  assert.equal(mapRolesProblem(undefined), undefined)
  assert.equal(mapRolesProblem('- rolearn: x\n'), undefined)
})

// Kills: the fallback `[]` filled, for text that is empty, absent or not a list.
test('mapRoles: no entries for empty, absent, non-list or invalid text; the entries of a list', () => {
  for (const text of [undefined, '', 'rolearn: x\n', '- [unclosed\n']) assert.deepEqual(mapRoles(text), [])
  assert.deepEqual(mapRoles('- rolearn: a\n  groups: [g]\n'), [{ rolearn: 'a', groups: ['g'] }])
})

// Kills: the key and item regexes loosened (anchor, `$`, `\s*`), the loop's `&&` and `?.` mutated, and
// the fallback options emptied.
test('styleOf: a nested list at or past its key indent sets indentSeq; anything else only lineWidth 0', () => {
  assert.deepEqual(styleOf('groups:\n- x'), { indentSeq: false, lineWidth: 0 })
  assert.deepEqual(styleOf('- groups:\n  - x'), { indentSeq: false, lineWidth: 0 })
  assert.deepEqual(styleOf('groups:  \n  - x'), { indentSeq: true, lineWidth: 0 })
  for (const text of [
    '',
    'x',
    // Items with no key line before them.
    '- a\n- b',
    // A key line with a value, or a comment that ends in a colon, is no key of a nested list.
    'a: b\n- c',
    'a:b\n- c',
    '# note:\n- a\n',
    // A "- " inside a value is no list item.
    '- groups:\n  foo: a - b\n',
  ])
    assert.deepEqual(styleOf(text), { lineWidth: 0 }, JSON.stringify(text))
})

// Kills: `text ?? ''` given another default, the problem check removed, its message emptied.
test('withMapRole: absent text takes the entry as a block list; a text that is not a list throws', () => {
  assert.equal(withMapRole(undefined, { rolearn: 'b' }), '- rolearn: b\n')
  assert.throws(
    () => withMapRole('rolearn: x\n', { rolearn: 'b' }),
    (e: Error) => e.message === 'aws-auth mapRoles is not a YAML list: fix it by hand, then run again',
  )
})

// Kills: `seq.flow = false` made unconditional (a non-empty flow list would be rewritten as a block).
test('withMapRole: a non-empty flow list stays a flow list', () => {
  assert.equal(withMapRole('[{rolearn: a}]\n', { rolearn: 'b' }), '[ { rolearn: a }, { rolearn: b } ]\n')
})

// Kills: the `!seq` early return removed or its `text ?? ''` mutated.
test('withoutMapRole: absent or empty text is empty, a comment-only text is given back as it is', () => {
  assert.equal(withoutMapRole(undefined, 'b'), '')
  assert.equal(withoutMapRole('', 'b'), '')
  assert.equal(withoutMapRole('# empty\n', 'b'), '# empty\n')
  assert.equal(withoutMapRole('[{rolearn: a}, {rolearn: b}]\n', 'b'), '[ { rolearn: a } ]\n')
  assert.equal(withoutMapRole('[{rolearn: b}]\n', 'b'), '[]\n')
  assert.throws(
    () => withoutMapRole('- [unclosed\n', 'b'),
    (e: Error) =>
      /^aws-auth mapRoles is not valid YAML \(.+\): fix it by hand, then run again$/.test(e.message),
  )
})
