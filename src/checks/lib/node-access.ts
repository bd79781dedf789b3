// Printed fixes that make a node role (the role, its policies, its cluster access) must run without
// eksctl, which is often not installed: where eksctl is the short way, the aws/kubectl way is printed
// beside it, labelled, and never run with it.
import type { Facts } from '../../facts/types.js'
import {
  NODE_ADVISED_POLICIES,
  NODE_ECR_POLICIES,
  NODE_MANAGED_POLICIES,
} from '../../desired/controller-policy.js'
import { partitionOf, shellQuote } from './facts.js'
import type { Fix } from '../types.js'
import { APPLY_MAP_ROLES, appendMapRoleCommand, READ_MAP_ROLES, setUsernameCommand } from './aws-auth-edit.js'

export const NODE_USERNAME = 'system:node:{{EC2PrivateDNSName}}'
export const NODE_GROUPS = ['system:bootstrappers', 'system:nodes'] as const

export const WITHOUT_EKSCTL = 'without eksctl (aws and kubectl only)'

const EC2_TRUST = JSON.stringify({
  Version: '2012-10-17',
  Statement: [{ Effect: 'Allow', Principal: { Service: 'ec2.amazonaws.com' }, Action: 'sts:AssumeRole' }],
})

/** A node role as nodes need it: trusted by EC2, with the worker-node, CNI, ECR pull and SSM policies. */
export function createNodeRoleCommands(facts: Facts, role: string, tags: Record<string, string>): string[] {
  const partition = partitionOf(facts)
  const tagArgs = Object.entries(tags).map(([k, v]) => shellQuote(`Key=${k},Value=${v}`))
  return [
    `aws iam create-role --role-name ${shellQuote(role)} --assume-role-policy-document ${shellQuote(EC2_TRUST)}${tagArgs.length ? ` --tags ${tagArgs.join(' ')}` : ''}`,
    ...[...NODE_MANAGED_POLICIES, NODE_ECR_POLICIES[0], ...NODE_ADVISED_POLICIES].map(
      (p) =>
        `aws iam attach-role-policy --role-name ${shellQuote(role)} --policy-arn arn:${partition}:iam::aws:policy/${p}`,
    ),
  ]
}

/** The cluster lets nodes in by access entry (API modes), else only by aws-auth (CONFIG_MAP, or unsaid). */
export function takesAccessEntries(facts: Facts): boolean {
  const mode = facts.eks.cluster.ok ? facts.eks.cluster.value?.authenticationMode : undefined
  return mode === 'API' || mode === 'API_AND_CONFIG_MAP'
}

export function accessEntryCommand(facts: Facts, roleArn: string): string {
  const { clusterName, region } = facts.meta
  return `aws eks create-access-entry --cluster-name ${shellQuote(clusterName)} --principal-arn ${shellQuote(roleArn)} --type EC2_LINUX --region ${region}`
}

export function eksctlMappingCommand(facts: Facts, roleArn: string): string {
  const { clusterName, region } = facts.meta
  return `eksctl create iamidentitymapping --cluster ${shellQuote(clusterName)} --region ${region} --arn ${shellQuote(roleArn)} --username ${shellQuote(NODE_USERNAME)} ${NODE_GROUPS.map((g) => `--group ${g}`).join(' ')}`
}

/**
 * The aws-auth node mapping with kubectl alone, keeping every other entry and key: the current
 * mapRoles text is read into a file and the entry appended in the list's own shape (aws-auth-edit.ts),
 * then only data.mapRoles is applied server-side (the other keys, mapUsers and mapAccounts, are another
 * manager's fields and stay; a merge patch would need the text JSON-escaped, a client-side apply could
 * drop keys its last-applied annotation holds). An absent ConfigMap reads as empty and is created.
 */
export function awsAuthMappingCommands(roleArn: string): string[] {
  const entry = [
    `- rolearn: ${roleArn}`,
    `  username: ${NODE_USERNAME}`,
    '  groups:',
    ...NODE_GROUPS.map((g) => `  - ${g}`),
  ]
  return [READ_MAP_ROLES, appendMapRoleCommand(entry), APPLY_MAP_ROLES]
}

/**
 * The username of the aws-auth entry for `rolearn` (exactly as written, quoted or not) set to the node
 * username, with kubectl and awk alone; every other entry and line unchanged.
 */
export function awsAuthUsernameCommands(rolearn: string): string[] {
  return [READ_MAP_ROLES, setUsernameCommand(rolearn, NODE_USERNAME), APPLY_MAP_ROLES]
}

/**
 * A fix whose node-access step is eksctl's mapping: the same steps again, with the kubectl mapping in
 * its place, as the alternative.
 */
export function withMappingAlternative(
  summary: string,
  steps: (access: string[]) => string[],
  facts: Facts,
  roleArns: string[],
): Fix {
  return {
    summary,
    commands: steps(roleArns.map((a) => eksctlMappingCommand(facts, a))),
    alternative: { label: WITHOUT_EKSCTL, commands: steps(roleArns.flatMap(awsAuthMappingCommands)) },
  }
}
