/** Bounds how many reads run at once, so a large cluster does not trip API throttling. */
export class Limiter {
  private active = 0
  private readonly queue: (() => void)[] = []

  constructor(private readonly max: number) {}

  async run<T>(fn: () => Promise<T>): Promise<T> {
    // A finishing task hands its slot straight to the first waiter (`active` is not decremented), so a
    // run() that arrives before the woken waiter resumes cannot take the same slot.
    if (this.active >= this.max) await new Promise<void>((resolve) => this.queue.push(resolve))
    else this.active++
    try {
      return await fn()
    } finally {
      const next = this.queue.shift()
      if (next) next()
      else this.active--
    }
  }
}

/** Remembers the promise of every read by key: a read asked for twice is made once. */
export class Memo {
  private readonly cache = new Map<string, Promise<unknown>>()

  get<T>(key: string, fn: () => Promise<T>): Promise<T> {
    let p = this.cache.get(key) as Promise<T> | undefined
    if (!p) {
      p = fn()
      this.cache.set(key, p)
    }
    return p
  }

  /** Forgets every answer: the next read of each goes to the API again (the world may have moved). */
  clear(): void {
    this.cache.clear()
  }
}

/** Counts the calls that actually reached an API, per operation. */
export class CallLog {
  readonly calls: string[] = []
  /** The calls that changed something (a no-op re-run must have none). */
  readonly writes: string[] = []

  record(op: string, write = false): void {
    this.calls.push(op)
    if (write) this.writes.push(op)
  }

  byService(): Record<string, number> {
    const out: Record<string, number> = {}
    for (const c of this.calls) {
      const service = c.slice(0, c.indexOf(':'))
      out[service] = (out[service] ?? 0) + 1
    }
    return out
  }

  duplicates(): string[] {
    const seen = new Set<string>()
    return this.calls.filter((c) => (seen.has(c) ? true : (seen.add(c), false)))
  }
}
