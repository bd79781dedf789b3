// Files named by the environment or by another file (KUBECONFIG, a kubeconfig's tokenFile or
// certificates, AWS_CONFIG_FILE, a chart's Chart.yaml) are read synchronously by karpctl or its
// libraries: a FIFO with no writer blocks such a read — and with it the event loop, so not even
// --timeout fires — and a device (/dev/zero) never ends. So each is opened without blocking and
// fstat-ed (the same file that is then read, no race with a rename) before a byte is read.
import { closeSync, constants, fstatSync, openSync, readFileSync } from 'node:fs'

/** Every such file is small (a kubeconfig, a key, a Chart.yaml); a larger one is not what it claims. */
export const MAX_CONFIG_FILE_BYTES = 16 << 20

/** Why a file was refused: `reason` completes "<what> <path> …" (e.g. "is a FIFO"). */
export class FileRefused extends Error {
  constructor(
    readonly reason: string,
    /** The errno of a failed open (ENOENT: the file does not exist), when that was the reason. */
    readonly errno?: string,
  ) {
    super(reason)
  }
}

function kindOf(info: import('node:fs').Stats): string {
  if (info.isDirectory()) return 'a directory'
  if (info.isFIFO()) return 'a FIFO'
  if (info.isSocket()) return 'a socket'
  if (info.isCharacterDevice() || info.isBlockDevice()) return 'a device'
  return 'not a regular file'
}

/** Opens `path` without blocking and refuses what is not a regular file of at most `maxBytes`. */
function openRegular(path: string, maxBytes: number): number {
  let fd: number
  try {
    // O_NONBLOCK: opening a FIFO with no writer returns at once instead of waiting for one.
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK)
  } catch (err) {
    const errno = (err as NodeJS.ErrnoException).code ?? 'EIO'
    throw new FileRefused(errno === 'ENOENT' ? 'does not exist' : `cannot be read (${errno})`, errno)
  }
  try {
    const info = fstatSync(fd)
    if (!info.isFile()) throw new FileRefused(`is ${kindOf(info)}, not a regular file`)
    if (info.size > maxBytes)
      throw new FileRefused(`is larger than ${maxBytes >> 20} MiB (${Math.ceil(info.size / 2 ** 20)} MiB)`)
    return fd
  } catch (err) {
    closeSync(fd)
    throw err
  }
}

/** The text of a regular file of at most `maxBytes`; FileRefused otherwise. */
export function readRegularFileSync(path: string, maxBytes = MAX_CONFIG_FILE_BYTES): string {
  const fd = openRegular(path, maxBytes)
  try {
    return readFileSync(fd, 'utf8')
  } catch (err) {
    throw new FileRefused(`cannot be read (${(err as NodeJS.ErrnoException).code ?? 'EIO'})`)
  } finally {
    closeSync(fd)
  }
}

/**
 * Checks, without reading, that a file another library will read is a regular file of at most
 * `maxBytes`. A missing file passes: the reader decides what its absence means.
 */
export function checkRegularFileSync(path: string, maxBytes = MAX_CONFIG_FILE_BYTES): void {
  try {
    closeSync(openRegular(path, maxBytes))
  } catch (err) {
    if (err instanceof FileRefused && err.errno === 'ENOENT') return
    throw err
  }
}
