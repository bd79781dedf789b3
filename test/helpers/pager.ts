// `Aws.all` for fakes: one page, answered by the fake's `call` (the real one follows the pages' tokens).
export type FakeCall = (service: string, op: string, input: Record<string, unknown>) => Promise<unknown>

export const onePage =
  (call: FakeCall) =>
  async (
    service: string,
    op: string,
    input: Record<string, unknown>,
    _tokenField: string,
    page: (out: unknown) => { items?: unknown[] },
  ) =>
    page(await call(service, op, input)).items ?? []
