// The questions install asks go through this interface: the terminal implementation is
// @inquirer/prompts (loaded only when a question is asked); tests script the answers.
export interface Choice<T> {
  name: string
  value: T
  description?: string
  /** Shown but not selectable, with why (a choice the cluster cannot take). */
  disabled?: string
}

export interface Prompter {
  select<T>(q: { message: string; choices: Choice<T>[]; default?: T }): Promise<T>
  checkbox<T>(q: { message: string; choices: (Choice<T> & { checked?: boolean })[] }): Promise<T[]>
  input(q: {
    message: string
    default?: string
    /** true, or why the answer is refused (asked again); may read a file the answer names. */
    validate?: (v: string) => true | string | Promise<true | string>
  }): Promise<string>
  confirm(q: { message: string; default?: boolean }): Promise<boolean>
}

export async function terminalPrompter(): Promise<Prompter> {
  const p = await import('@inquirer/prompts')
  // A person takes the time they take: the bound on the reads ends at the first question.
  const { readsDone } = await import('./read-bound.js')
  const asking = <T>(ask: () => Promise<T>) => {
    readsDone()
    return ask()
  }
  return {
    select: (q) => asking(() => p.select(q)),
    checkbox: (q) =>
      asking(() =>
        p.checkbox({ ...q, required: true, validate: (v) => (v.length > 0 ? true : 'choose at least one') }),
      ),
    input: (q) => asking(() => p.input(q)),
    confirm: (q) => asking(() => p.confirm(q)),
  }
}
