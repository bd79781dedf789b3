import assert from 'node:assert/strict'
import { test } from 'node:test'
import { closest, distance, notFoundMessage } from '../../src/hooks/not-found.js'

const commands = ['doctor', 'install', 'teardown', 'tenant:add', 'tenant:list', 'tenant:remove']
const topics = ['tenant']

test('the command meant is the closest within a typo', () => {
  assert.equal(distance('doctr', 'doctor'), 1)
  assert.equal(distance('dcotor', 'doctor'), 1, 'two neighbours swapped')
  assert.equal(closest('doctr', commands), 'doctor')
  assert.equal(closest('tenant:ad', commands), 'tenant:add')
  assert.equal(closest('xyzzy', commands), undefined)
})

test('one line: what is not a command, the one meant, and where the help is', () => {
  const cases: [string, string][] = [
    ['doctr', 'karpctl has no command "doctr": did you mean `karpctl doctor`? (see `karpctl --help`)'],
    [
      'tenant:ad:acme',
      'karpctl tenant has no command "ad": did you mean `karpctl tenant add`? (see `karpctl tenant --help`)',
    ],
    ['tenant:explode', 'karpctl tenant has no command "explode" (see `karpctl tenant --help`)'],
    ['xyzzy:plugh', 'karpctl has no command "xyzzy" (see `karpctl --help`)'],
    ['x\u001b[2J', 'karpctl has no command "x\\u001b[2J" (see `karpctl --help`)'],
  ]
  for (const [id, line] of cases) assert.equal(notFoundMessage(id, commands, topics), line, id)
})
