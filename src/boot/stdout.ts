// stdout that cannot take the output: Node emits the write's failure as an 'error' on process.stdout,
// which unhandled is a stack trace (or, caught by oclif, exit 2 with nothing said).
import { ExitCode } from '../errors.js'

/**
 * A closed pipe (`karpctl doctor | head`) ends the run without a word, as `yes | head` does: the reader
 * chose to stop reading. Any other failure (ENOSPC on a full disk, EIO) is one line on stderr, since the
 * output is incomplete and no one would know. Either way the run stops: every later write would fail too.
 */
export function guardStdout(
  stdout: NodeJS.WriteStream = process.stdout,
  stderr: NodeJS.WritableStream = process.stderr,
  exit: (code: number) => void = (code) => process.exit(code),
): void {
  let ended = false
  stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (ended) return
    ended = true
    if (err.code === 'EPIPE') return exit(ExitCode.outputClosed)
    try {
      stderr.write(
        `Error: karpctl could not write its output to stdout (${err.code ?? 'error'}${err.code === 'ENOSPC' ? ': no space left on the device' : ''}): the output is incomplete; free space or redirect it elsewhere, and run again\n`,
      )
    } catch {
      // stderr is gone too: the exit code still says so.
    }
    exit(ExitCode.outputFailed)
  })
}
