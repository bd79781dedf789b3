// CloudFormation on moto_server: the AWS query protocol over fetch (no @aws-sdk/client-cloudformation in
// node_modules), and the template preprocessing moto 5.2.1 needs to deploy a real template faithfully.
//
// moto 5.2.1 gaps, and what is done about each (see prepareTemplateForMoto / deployStack):
// - AWS::IAM::ManagedPolicy json.dumps()es its PolicyDocument: a `!Sub |` JSON *string* document is
//   stored double-encoded. The string is parsed here into an object whose string leaves that hold
//   `${…}` become `Fn::Sub`s (moto resolves those); keys holding `${Param}` are substituted here from
//   the stack parameters (CloudFormation cannot Sub a key — that is why the template uses a string).
// - AWS::IAM::Role ignores ManagedPolicyArns: after the stack is created, each role's ARNs are
//   resolved and attached with IAM's AttachRolePolicy, as CloudFormation would have.
// - AWS::SQS::QueuePolicy is not implemented (moto warns and skips it): it is removed from the
//   template and, after the stack is created, its document is set as each queue's Policy attribute.
// - `deploy`-style change sets carry no stack tags (as reported; not re-checked here): the stack is
//   made with CreateStack.
// - Stack tags are propagated only to EC2 resources: deployStack() tags the stack's IAM roles with
//   the stack's tags as CloudFormation does (the aws:cloudformation:* system tags are not added).
import { readFileSync } from 'node:fs'
import { AttachRolePolicyCommand, TagRoleCommand } from '@aws-sdk/client-iam'
import { SetQueueAttributesCommand } from '@aws-sdk/client-sqs'
import { parse, type CollectionTag, type ScalarTag, type YAMLMap, type YAMLSeq } from 'yaml'
import { ACCOUNT_ID, REGION } from './constants.js'
import type { AwsClients, AwsTarget } from './seed.js'

/** A CloudFormation template as JSON (short tags expanded to their Fn:: forms). */
export interface Template {
  AWSTemplateFormatVersion?: string
  Description?: string
  Parameters?: Record<string, { Type: string; Description?: string; Default?: string }>
  Resources: Record<string, TemplateResource>
  Outputs?: Record<string, { Value: unknown; Export?: { Name: unknown } }>
}

export interface TemplateResource {
  Type: string
  Properties?: Record<string, unknown>
  DependsOn?: string | string[]
  Condition?: string
}

const INTRINSICS = [
  'And',
  'Base64',
  'Cidr',
  'Equals',
  'FindInMap',
  'GetAtt',
  'GetAZs',
  'If',
  'ImportValue',
  'Join',
  'Not',
  'Or',
  'Select',
  'Split',
  'Sub',
] as const

/** yaml tags for CloudFormation's short forms (`!Sub`, `!Ref`, `!GetAtt A.B`, `!If [...]`, …). */
export const cfnYamlTags: (ScalarTag | CollectionTag)[] = [
  ...INTRINSICS.flatMap((f): (ScalarTag | CollectionTag)[] => {
    const key = `Fn::${f}`
    return [
      {
        tag: `!${f}`,
        resolve: (v: string) => ({ [key]: f === 'GetAtt' ? v.split('.') : v }),
      },
      {
        tag: `!${f}`,
        collection: 'seq',
        resolve: (v: YAMLMap.Parsed | YAMLSeq.Parsed) => ({ [key]: v.toJSON() as unknown }),
      },
      {
        tag: `!${f}`,
        collection: 'map',
        resolve: (v: YAMLMap.Parsed | YAMLSeq.Parsed) => ({ [key]: v.toJSON() as unknown }),
      },
    ]
  }),
  { tag: '!Ref', resolve: (v: string) => ({ Ref: v }) },
  { tag: '!Condition', resolve: (v: string) => ({ Condition: v }) },
]

/** Reads a YAML or JSON template into its JSON form. */
export function loadTemplate(path: string): Template {
  const tpl = parse(readFileSync(path, 'utf8'), { customTags: cfnYamlTags }) as Template
  if (!tpl?.Resources) throw new Error(`${path}: not a CloudFormation template (no Resources)`)
  return tpl
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v)

/** `${Name}` references in a Sub string (not `${!Literal}`). */
const subRefs = (s: string) => [...s.matchAll(/\$\{([^!}][^}]*)\}/g)].map((m) => m[1]!)

/** A JSON document template (the string of a `!Sub |`) as an object moto's Fn::Sub can resolve. */
function subDocumentToObject(text: string, params: Record<string, string>, where: string): unknown {
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return subRefs(v).length > 0 ? { 'Fn::Sub': v } : v
    if (Array.isArray(v)) return v.map(walk)
    if (isObject(v)) {
      return Object.fromEntries(
        Object.entries(v).map(([k, x]) => [
          k.replace(/\$\{([^!}][^}]*)\}/g, (_m, name: string) => {
            const p = params[name]
            if (p === undefined) throw new Error(`${where}: key ${k} needs \${${name}}, not a parameter`)
            return p
          }),
          walk(x),
        ]),
      )
    }
    return v
  }
  return walk(JSON.parse(text))
}

/** What deployStack() must still do after CreateStack, because moto did not. */
export interface MotoFollowUps {
  /** logical id of an AWS::IAM::Role → its ManagedPolicyArns (unresolved) */
  managedPolicyArns: Record<string, unknown[]>
  /** the AWS::SQS::QueuePolicy resources taken out of the template */
  queuePolicies: { logicalId: string; queues: unknown[]; document: unknown }[]
}

/** The template moto 5.2.1 deploys as AWS would, and the follow-ups it leaves to the caller. */
export function prepareTemplateForMoto(
  source: Template,
  params: Record<string, string>,
): { template: Template; followUps: MotoFollowUps } {
  const template = structuredClone(source)
  const followUps: MotoFollowUps = { managedPolicyArns: {}, queuePolicies: [] }
  for (const [id, r] of Object.entries(template.Resources)) {
    const p = r.Properties ?? {}
    if (r.Type === 'AWS::IAM::ManagedPolicy' || r.Type === 'AWS::IAM::Policy') {
      const doc = p.PolicyDocument
      if (isObject(doc) && typeof doc['Fn::Sub'] === 'string') {
        p.PolicyDocument = subDocumentToObject(doc['Fn::Sub'], params, id)
      } else if (typeof doc === 'string') {
        p.PolicyDocument = JSON.parse(doc) as unknown
      }
    }
    if (r.Type === 'AWS::IAM::Role' && Array.isArray(p.ManagedPolicyArns)) {
      followUps.managedPolicyArns[id] = p.ManagedPolicyArns as unknown[]
    }
    if (r.Type === 'AWS::SQS::QueuePolicy') {
      followUps.queuePolicies.push({
        logicalId: id,
        queues: (p.Queues as unknown[]) ?? [],
        document: p.PolicyDocument,
      })
      delete template.Resources[id]
    }
  }
  return { template, followUps }
}

// ------------------------------------------------------------------ the query API

export interface StackResource {
  logicalId: string
  physicalId: string
  type: string
  status: string
}

export interface Stack {
  stackName: string
  stackId: string
  status: string
  tags: Record<string, string>
  outputs: Record<string, string>
}

export class CloudFormationError extends Error {
  constructor(
    readonly action: string,
    readonly status: number,
    readonly body: string,
  ) {
    super(`CloudFormation ${action}: HTTP ${status}\n${body.slice(0, 2000)}`)
  }
}

const xmlText = (s: string) =>
  s
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&')

/** An element of a query-API response: its text (leaves) and its child elements. */
export interface XmlNode {
  name: string
  text: string
  children: XmlNode[]
}

/** Enough XML for query-API responses: elements, text, self-closing tags; attributes ignored. */
export function parseXml(xml: string): XmlNode {
  const root: XmlNode = { name: '#root', text: '', children: [] }
  const stack = [root]
  for (const m of xml.matchAll(/<(\/?)([A-Za-z_][\w.:-]*)[^>]*?(\/?)>|([^<]+)/g)) {
    const top = stack[stack.length - 1]!
    if (m[4] !== undefined) top.text += xmlText(m[4])
    else if (m[1]) stack.pop()
    else {
      const node: XmlNode = { name: m[2]!, text: '', children: [] }
      top.children.push(node)
      if (!m[3]) stack.push(node)
    }
  }
  return root
}

const child = (n: XmlNode | undefined, name: string) => n?.children.find((c) => c.name === name)
const field = (n: XmlNode | undefined, name: string) => child(n, name)?.text ?? ''
/** Depth-first: the first element named `name`. */
const find = (n: XmlNode, name: string): XmlNode | undefined => {
  for (const c of n.children) {
    if (c.name === name) return c
    const f = find(c, name)
    if (f) return f
  }
  return undefined
}
const members = (n: XmlNode, list: string) =>
  (find(n, list)?.children ?? []).filter((c) => c.name === 'member')

/**
 * CloudFormation's query API on moto. moto checks no signature; the Authorization header only names
 * the service so moto_server routes the request to CloudFormation.
 */
export class CloudFormation {
  readonly region: string
  constructor(private readonly target: AwsTarget) {
    this.region = target.region ?? REGION
  }

  async call(action: string, params: Record<string, string> = {}): Promise<string> {
    const body = new URLSearchParams({ Action: action, Version: '2010-05-15', ...params })
    const res = await fetch(this.target.awsEndpoint, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded; charset=utf-8',
        authorization: `AWS4-HMAC-SHA256 Credential=testing/20260101/${this.region}/cloudformation/aws4_request, SignedHeaders=host, Signature=0`,
      },
      body,
    })
    const text = await res.text()
    if (!res.ok) throw new CloudFormationError(action, res.status, text)
    return text
  }

  async createStack(opts: {
    stackName: string
    template: Template
    parameters?: Record<string, string>
    tags?: Record<string, string>
    capabilities?: string[]
  }): Promise<string> {
    const p: Record<string, string> = {
      StackName: opts.stackName,
      TemplateBody: JSON.stringify(opts.template),
    }
    Object.entries(opts.parameters ?? {}).forEach(([k, v], i) => {
      p[`Parameters.member.${i + 1}.ParameterKey`] = k
      p[`Parameters.member.${i + 1}.ParameterValue`] = v
    })
    Object.entries(opts.tags ?? {}).forEach(([k, v], i) => {
      p[`Tags.member.${i + 1}.Key`] = k
      p[`Tags.member.${i + 1}.Value`] = v
    })
    ;(opts.capabilities ?? ['CAPABILITY_NAMED_IAM']).forEach(
      (c, i) => (p[`Capabilities.member.${i + 1}`] = c),
    )
    return find(parseXml(await this.call('CreateStack', p)), 'StackId')?.text ?? ''
  }

  async describeStack(stackName: string): Promise<Stack> {
    const xml = parseXml(await this.call('DescribeStacks', { StackName: stackName }))
    const s = members(xml, 'Stacks')[0]
    if (!s) throw new Error(`DescribeStacks ${stackName}: no stack`)
    const pairs = (list: string, k: string, v: string) =>
      Object.fromEntries(members(s, list).map((m) => [field(m, k), field(m, v)]))
    return {
      stackName: field(s, 'StackName'),
      stackId: field(s, 'StackId'),
      status: field(s, 'StackStatus'),
      tags: pairs('Tags', 'Key', 'Value'),
      outputs: pairs('Outputs', 'OutputKey', 'OutputValue'),
    }
  }

  async describeStackResources(stackName: string): Promise<StackResource[]> {
    const xml = parseXml(await this.call('DescribeStackResources', { StackName: stackName }))
    return members(xml, 'StackResources').map((m) => ({
      logicalId: field(m, 'LogicalResourceId'),
      physicalId: field(m, 'PhysicalResourceId'),
      type: field(m, 'ResourceType'),
      status: field(m, 'ResourceStatus'),
    }))
  }

  async listStackNames(): Promise<string[]> {
    const xml = parseXml(await this.call('ListStacks'))
    return members(xml, 'StackSummaries')
      .filter((m) => field(m, 'StackStatus') !== 'DELETE_COMPLETE')
      .map((m) => field(m, 'StackName'))
  }
}

// ------------------------------------------------------------------ deploy

export interface DeployedStack extends Stack {
  resources: StackResource[]
  /** logical id → physical id */
  physical: Record<string, string>
}

/**
 * Resolves Ref / Fn::Sub / Fn::GetAtt against what the stack made (for the follow-ups moto leaves):
 * parameters, pseudo parameters, physical ids and the attributes given in `attrs` (`Logical.Attr`).
 */
export function resolveIntrinsics(
  v: unknown,
  scope: { params: Record<string, string>; physical: Record<string, string>; attrs: Record<string, string> },
  region = REGION,
): unknown {
  const pseudo: Record<string, string> = {
    'AWS::Partition': 'aws',
    'AWS::Region': region,
    'AWS::AccountId': ACCOUNT_ID,
    'AWS::URLSuffix': 'amazonaws.com',
  }
  const ref = (name: string): string => {
    const r = scope.params[name] ?? pseudo[name] ?? scope.physical[name] ?? scope.attrs[name]
    if (r === undefined) throw new Error(`cannot resolve \${${name}}`)
    return r
  }
  const walk = (x: unknown): unknown => {
    if (Array.isArray(x)) return x.map(walk)
    if (!isObject(x)) return x
    if (typeof x.Ref === 'string') return ref(x.Ref)
    if (typeof x['Fn::Sub'] === 'string')
      return x['Fn::Sub'].replace(/\$\{([^!}][^}]*)\}/g, (_m, n: string) => ref(n))
    if (Array.isArray(x['Fn::GetAtt'])) return ref((x['Fn::GetAtt'] as string[]).join('.'))
    return Object.fromEntries(Object.entries(x).map(([k, y]) => [k, walk(y)]))
  }
  return walk(v)
}

/**
 * CreateStack of a real template on moto, then the follow-ups moto skips (managed policy attachments,
 * queue policies, stack tags on IAM roles), so the account looks as CloudFormation on AWS leaves it.
 */
export async function deployStack(
  target: AwsTarget,
  aws: AwsClients,
  opts: {
    stackName: string
    template: Template
    parameters?: Record<string, string>
    tags?: Record<string, string>
  },
): Promise<DeployedStack> {
  const cfn = new CloudFormation(target)
  const params = opts.parameters ?? {}
  const { template, followUps } = prepareTemplateForMoto(opts.template, params)
  await cfn.createStack({ stackName: opts.stackName, template, parameters: params, tags: opts.tags })
  const stack = await cfn.describeStack(opts.stackName)
  if (stack.status !== 'CREATE_COMPLETE') throw new Error(`stack ${opts.stackName}: ${stack.status}`)
  const resources = await cfn.describeStackResources(opts.stackName)
  const missing = Object.keys(template.Resources).filter((id) => !resources.some((r) => r.logicalId === id))
  if (missing.length) throw new Error(`stack ${opts.stackName}: moto made no ${missing.join(', ')}`)
  const physical = Object.fromEntries(resources.map((r) => [r.logicalId, r.physicalId]))
  const attrs: Record<string, string> = {}
  for (const r of resources) {
    if (r.type === 'AWS::IAM::Role') {
      attrs[`${r.logicalId}.Arn`] = `arn:aws:iam::${ACCOUNT_ID}:role/${r.physicalId}`
    }
    if (r.type === 'AWS::SQS::Queue') {
      // CloudFormation's physical id of a queue is its URL.
      attrs[`${r.logicalId}.Arn`] = `arn:aws:sqs:${cfn.region}:${ACCOUNT_ID}:${r.physicalId.split('/').pop()}`
      attrs[`${r.logicalId}.QueueName`] = r.physicalId.split('/').pop()!
    }
  }
  const scope = { params, physical, attrs }
  for (const [id, arns] of Object.entries(followUps.managedPolicyArns)) {
    for (const arn of resolveIntrinsics(arns, scope, cfn.region) as string[]) {
      await aws.iam.send(new AttachRolePolicyCommand({ RoleName: physical[id]!, PolicyArn: arn }))
    }
  }
  for (const qp of followUps.queuePolicies) {
    const doc = resolveIntrinsics(qp.document, scope, cfn.region) as Record<string, unknown>
    for (const url of resolveIntrinsics(qp.queues, scope, cfn.region) as string[]) {
      await aws.sqs.send(
        new SetQueueAttributesCommand({
          QueueUrl: url,
          // SQS reports Version 2012-10-17 even when the template omits it
          Attributes: { Policy: JSON.stringify({ Version: '2012-10-17', ...doc }) },
        }),
      )
    }
  }
  const userTags = Object.entries(opts.tags ?? {}).map(([Key, Value]) => ({ Key, Value }))
  if (userTags.length) {
    for (const r of resources.filter((x) => x.type === 'AWS::IAM::Role')) {
      await aws.iam.send(new TagRoleCommand({ RoleName: r.physicalId, Tags: userTags }))
    }
  }
  return { ...stack, resources, physical }
}
