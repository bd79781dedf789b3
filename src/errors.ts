// Errors the user can act on. Each carries a one-line message with the fix and a distinct exit code;
// the command layer prints only the message (the stack only with --debug).

export const ExitCode = {
  ok: 0,
  findings: 1,
  /** The tool could not run: bad input, no credentials, unreachable cluster. */
  cannotRun: 2,
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
