// Errors the user can act on. Each carries a one-line message with the fix and a distinct exit code;
// the command layer prints only the message (the stack only with --debug).

export const ExitCode = {
  ok: 0,
  findings: 1,
  /** The tool could not run: bad input, no credentials, unreachable cluster. */
  cannotRun: 2,
  /** stdout could not be written (ENOSPC, EIO): the output is incomplete (sysexits' EX_IOERR). */
  outputFailed: 74,
  /** stdout's reader went away (`| head`): what a shell reports for a program SIGPIPE ended, 128 + 13. */
  outputClosed: 141,
} as const

export class KarpctlError extends Error {
  readonly exitCode: number = ExitCode.cannotRun
  constructor(
    message: string,
    /** Stable machine-readable code for --json consumers. */
    readonly code: string,
  ) {
    super(message)
  }
}

/** Bad user input: a flag, a file, a name. */
export class InputError extends KarpctlError {
  constructor(message: string, code = 'INVALID_INPUT') {
    super(message, code)
  }
}

/** The environment is not usable: credentials, kubeconfig, region, cluster. */
export class EnvironmentError extends KarpctlError {
  constructor(message: string, code: string) {
    super(message, code)
  }
}

// Control characters (C0, DEL, C1), the Unicode line separators and the bidirectional controls (as
// report lines show them, src/report/terminal.ts): what would split a one-line message, reach the
// terminal as an escape sequence, or reorder what the line says (`web\u202eevil` reads "webllive").
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g

export const escapeControl = (c: string): string => {
  switch (c) {
    case '\n':
      return '\\n'
    case '\r':
      return '\\r'
    case '\t':
      return '\\t'
    default:
      return `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`
  }
}

/**
 * A value the user (or a file) gave, as an error message shows it: in double quotes, with every
 * control character escaped, so a newline in `--cluster` or in a path cannot split the line.
 */
export function quote(value: string): string {
  return `"${value.replace(/["\\]/g, '\\$&').replace(CONTROL, escapeControl)}"`
}

/** A message made safe to print as one line: control characters escaped, never interpreted. */
export function oneLine(message: string): string {
  return message.replace(CONTROL, escapeControl)
}

/** One line saying whose server answered what, and the stable code an error ending the run carries. */
export interface Answer {
  line: string
  code: string
}

const ANSWER = Symbol('karpctl.answer')

/**
 * Marks a server's error (an AWS SDK error, a Kubernetes API error) with the line that says whose fault
 * it is. The error keeps its class and fields, so a read still captures it as data (a check `unknown`)
 * and callers still tell a not-found from the rest; when nothing catches it, the run ends with this line
 * instead of "karpctl could not run".
 */
export function markAnswer<E>(err: E, answer: Answer): E {
  if (err && typeof err === 'object')
    Object.defineProperty(err, ANSWER, { value: answer, configurable: true })
  return err
}

export function answerOf(err: unknown): Answer | undefined {
  return err && typeof err === 'object' ? (err as { [ANSWER]?: Answer })[ANSWER] : undefined
}

/**
 * Text a server sent, as a message may quote it: one line, whitespace runs collapsed, control
 * characters escaped, at most `max` characters. (Secrets are the caller's: it redacts first.)
 */
export function clip(text: string, max = 160): string {
  const flat = text.replace(/\s+/g, ' ').trim()
  const cut = flat.length > max ? `${flat.slice(0, max - 1)}…` : flat
  return oneLine(cut)
}

/**
 * The process ran out of file descriptors (EMFILE; ENFILE: the whole system did): every socket and file
 * after it fails the same way, and Node says only `EMFILE … Local (undefined:undefined)`. One line
 * that names the limit and how to raise it; undefined for any other error.
 */
export function outOfFiles(err: unknown, doing: string): EnvironmentError | undefined {
  const e = err as { code?: unknown; cause?: { code?: unknown } } | null
  const code = e?.code ?? e?.cause?.code
  if (code !== 'EMFILE' && code !== 'ENFILE') return undefined
  const whose = code === 'EMFILE' ? "karpctl's limit of open files" : "the system's limit of open files"
  return new EnvironmentError(
    `${doing} failed: ${whose} is reached (${code}): raise it (\`ulimit -n 1024\`) and run again`,
    'TOO_MANY_OPEN_FILES',
  )
}
