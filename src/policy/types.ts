// An IAM policy document as AWS writes it (identity, trust, key and queue policies alike): the shape
// karpctl parses, evaluates, compares and writes.

export interface PolicyStatement {
  Sid?: string
  Effect: 'Allow' | 'Deny'
  Action?: string | string[]
  NotAction?: string | string[]
  Resource?: string | string[]
  NotResource?: string | string[]
  Principal?: '*' | Record<string, string | string[]>
  NotPrincipal?: '*' | Record<string, string | string[]>
  Condition?: Record<string, Record<string, string | string[] | boolean>>
}

export interface PolicyDocument {
  Version?: string
  Id?: string
  Statement: PolicyStatement[]
}
