// The one way karpctl writes a file: a snapshot the user keeps, a values file handed to helm. A file
// written in place is lost to a crash (SIGKILL mid-write leaves half of it) and torn by two writers
// (one's head, the other's tail); an existing file's mode (0644) would survive the write. So each write
// goes to its own temporary file beside the target (same directory: same filesystem, so the rename is
// atomic), mode 0600, flushed to disk, then renamed over the target, and the directory entry flushed:
// a reader sees the old file or the new one, whole, never a mix.
import { randomBytes } from 'node:crypto'
import { open, readdir, rename, rm } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'

/** Writes `data` to `path` atomically, mode 0600 (whatever the file had before). */
export async function writeFileAtomic(path: string, data: string | Uint8Array): Promise<void> {
  const dir = dirname(path)
  // Own name per writer (pid and random): concurrent writers never share a temporary file.
  const tmp = join(dir, `.${basename(path)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`)
  await removeStaleTemporaries(dir, basename(path))
  const file = await open(tmp, 'wx', 0o600)
  let closed = false
  try {
    await file.writeFile(data)
    // `open`'s mode is filtered by the umask; the file must be private whatever the umask says.
    await file.chmod(0o600)
    await file.sync()
    await file.close()
    closed = true
    await rename(tmp, path)
  } catch (err) {
    if (!closed) await file.close().catch(() => undefined)
    await rm(tmp, { force: true })
    throw err
  }
  await syncDirectory(dir)
}

/** Makes the rename itself durable. Filesystems that cannot fsync a directory say so; that is not a failure. */
async function syncDirectory(dir: string): Promise<void> {
  let handle
  try {
    handle = await open(dir, 'r')
    await handle.sync()
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    if (code !== 'EISDIR' && code !== 'EINVAL' && code !== 'EPERM' && code !== 'EACCES') throw err
  } finally {
    await handle?.close()
  }
}

/**
 * A writer killed mid-write (SIGKILL, power loss) leaves its temporary file behind: the next save of
 * the same target removes those whose writer is gone. A live writer's (another karpctl saving now,
 * or this process) is kept — removing it would fail that save.
 */
async function removeStaleTemporaries(dir: string, name: string): Promise<void> {
  let entries: string[]
  try {
    entries = await readdir(dir)
  } catch {
    return // the write itself reports a missing or unreadable directory
  }
  const prefix = `.${name}.`
  for (const entry of entries) {
    if (!entry.startsWith(prefix)) continue
    const m = /^(\d+)\.[0-9a-f]{12}\.tmp$/.exec(entry.slice(prefix.length))
    if (!m) continue
    const pid = Number(m[1])
    if (pid === process.pid || isAlive(pid)) continue
    await rm(join(dir, entry), { force: true }).catch(() => undefined)
  }
}

/** Whether a process `pid` runs (EPERM: it does, as another user). */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
}
