// Colour only for a terminal that wants it: NO_COLOR, FORCE_COLOR=0, TERM=dumb and pipes get plain text.
export interface Style {
  red(s: string): string
  green(s: string): string
  yellow(s: string): string
  dim(s: string): string
  bold(s: string): string
  cyan(s: string): string
}

export function useColor(
  stream: { isTTY?: boolean } = process.stdout,
  env: NodeJS.ProcessEnv = process.env,
): boolean {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false
  if (env.FORCE_COLOR !== undefined) return env.FORCE_COLOR !== '0'
  if (env.TERM === 'dumb') return false
  return Boolean(stream.isTTY)
}

export function style(color: boolean): Style {
  const wrap = (open: number, close: number) => (s: string) =>
    color ? `\u001b[${open}m${s}\u001b[${close}m` : s
  return {
    red: wrap(31, 39),
    green: wrap(32, 39),
    yellow: wrap(33, 39),
    cyan: wrap(36, 39),
    dim: wrap(2, 22),
    bold: wrap(1, 22),
  }
}
