// Limiter, Memo and CallLog, driven with deferred promises: every step is explicit, nothing waits on a clock.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { setImmediate as drain } from 'node:timers/promises'
import { CallLog, Limiter, Memo } from '../../../src/context/limiter.js'

interface Deferred<T> {
  promise: Promise<T>
  resolve(value: T): void
  reject(err: unknown): void
}

function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void
  let reject!: (err: unknown) => void
  const promise = new Promise<T>((res, rej) => {
    resolve = res
    reject = rej
  })
  return { promise, resolve, reject }
}

/** Counts how many tasks are inside the limiter at once, and which have started. */
class Probe {
  active = 0
  max = 0
  readonly started: number[] = []

  task<T>(id: number, gate: Promise<T>): () => Promise<T> {
    return async () => {
      this.started.push(id)
      this.active++
      this.max = Math.max(this.max, this.active)
      try {
        return await gate
      } finally {
        this.active--
      }
    }
  }
}

test('Limiter runs at most N at once, starts queued tasks in order, and returns their values', async () => {
  const limiter = new Limiter(2)
  const probe = new Probe()
  const gates = Array.from({ length: 6 }, () => deferred<number>())
  const runs = gates.map((g, i) => limiter.run(probe.task(i, g.promise)))

  await drain()
  assert.deepEqual(probe.started, [0, 1])
  assert.equal(probe.active, 2)

  // Finish out of order: whichever slot frees, the next queued task takes it.
  gates[1]!.resolve(10)
  await drain()
  assert.deepEqual(probe.started, [0, 1, 2])
  assert.equal(probe.active, 2)

  gates[0]!.resolve(0)
  gates[2]!.resolve(20)
  await drain()
  assert.deepEqual(probe.started, [0, 1, 2, 3, 4])
  assert.equal(probe.active, 2)

  for (const i of [3, 4, 5]) gates[i]!.resolve(i * 10)
  assert.deepEqual(await Promise.all(runs), [0, 10, 20, 30, 40, 50])
  assert.deepEqual(probe.started, [0, 1, 2, 3, 4, 5])
  assert.equal(probe.max, 2)
  assert.equal(probe.active, 0)
})

test('Limiter frees the slot of a task that rejects, and passes the rejection on', async () => {
  const limiter = new Limiter(1)
  const probe = new Probe()
  const a = deferred()
  const b = deferred<string>()
  const ra = limiter.run(probe.task(0, a.promise))
  const rb = limiter.run(probe.task(1, b.promise))
  await drain()
  assert.deepEqual(probe.started, [0])

  a.reject(new Error('boom'))
  await assert.rejects(ra, /boom/)
  await drain()
  assert.deepEqual(probe.started, [0, 1])

  b.resolve('done')
  assert.equal(await rb, 'done')
  assert.equal(probe.max, 1)
})

test('Limiter frees the slot of a task that throws synchronously', async () => {
  const limiter = new Limiter(1)
  await assert.rejects(
    limiter.run(() => {
      throw new Error('sync')
    }),
    /sync/,
  )
  assert.equal(await limiter.run(async () => 'next'), 'next')
})

test('Limiter stays within N when a new task arrives while a freed slot is being handed over', async () => {
  // A task that finishes wakes the first queued task; a run() that lands in the few microtasks before the
  // woken task resumes must not take the same slot. Try every arrival point over a range of microtask depths.
  for (let depth = 0; depth < 12; depth++) {
    const limiter = new Limiter(1)
    const probe = new Probe()
    const a = deferred()
    const b = deferred()
    const c = deferred()
    const runs = [limiter.run(probe.task(0, a.promise)), limiter.run(probe.task(1, b.promise))]
    await drain()

    a.resolve()
    let arrival: Promise<unknown> = Promise.resolve()
    for (let i = 0; i < depth; i++) arrival = arrival.then(() => undefined)
    runs.push(arrival.then(() => limiter.run(probe.task(2, c.promise))))
    await drain()
    assert.equal(probe.active, 1, `depth ${depth}: one task holds the only slot`)

    b.resolve()
    c.resolve()
    await Promise.all(runs)
    assert.equal(probe.max, 1, `depth ${depth}: at most one task ran at once`)
    assert.deepEqual([...probe.started].sort(), [0, 1, 2])
  }
})

test('Memo runs a key once and shares its promise', async () => {
  const memo = new Memo()
  let calls = 0
  const gate = deferred<string>()
  const fn = () => {
    calls++
    return gate.promise
  }
  const p1 = memo.get('k', fn)
  const p2 = memo.get('k', fn)
  assert.equal(p1, p2)
  assert.equal(calls, 1)

  const other = memo.get('other', async () => 'other value')
  assert.notEqual(other, p1)

  gate.resolve('value')
  assert.equal(await p1, 'value')
  assert.equal(await memo.get('k', fn), 'value')
  assert.equal(calls, 1)
  assert.equal(await other, 'other value')
})

test('Memo shares a rejection too: the failed read is not retried', async () => {
  const memo = new Memo()
  let calls = 0
  const fn = async (): Promise<string> => {
    calls++
    throw new Error('denied')
  }
  const p1 = memo.get('k', fn)
  const p2 = memo.get('k', fn)
  assert.equal(p1, p2)
  await assert.rejects(p1, /denied/)
  await assert.rejects(p2, /denied/)
  await assert.rejects(memo.get('k', fn), /denied/)
  assert.equal(calls, 1)
})

test('CallLog counts calls per service and lists the repeated ones', () => {
  const log = new CallLog()
  assert.deepEqual(log.byService(), {})
  assert.deepEqual(log.duplicates(), [])

  log.record('iam:GetRole:{"RoleName":"a"}')
  log.record('eks:DescribeCluster:{"name":"demo"}')
  log.record('iam:GetRole:{"RoleName":"b"}')
  log.record('iam:GetRole:{"RoleName":"a"}')
  log.record('sqs:GetQueueUrl:{"QueueName":"demo"}')
  log.record('iam:GetRole:{"RoleName":"a"}')

  assert.deepEqual(log.byService(), { iam: 4, eks: 1, sqs: 1 })
  assert.deepEqual(log.duplicates(), ['iam:GetRole:{"RoleName":"a"}', 'iam:GetRole:{"RoleName":"a"}'])
  assert.equal(log.calls.length, 6)
})
