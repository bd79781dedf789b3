// The field corpus's `pod-identity` breaks (issue 35, A), on the Pod Identity API that
// bed/moto_launcher.py gives moto. Each starts from the getting-started install moved to Pod Identity
// the way users move it (Karpenter's docs and terraform-aws-eks#3064: the chart's IRSA annotation
// dropped, the role trusting pods.eks.amazonaws.com, the eks-pod-identity-agent add-on, an association
// for the controller's ServiceAccount), with one step of that move done wrong, as reported.
import { CreateAddonCommand, CreatePodIdentityAssociationCommand } from '@aws-sdk/client-eks'
import { UpdateAssumeRolePolicyCommand } from '@aws-sdk/client-iam'
import { controllerTrustPolicy, withoutIrsaAnnotation } from '../bed/index.js'
import type { Ctx, Scenario } from './scenario.js'

/** What one move to Pod Identity does; a scenario leaves one part out or gets it wrong. */
interface Move {
  /** the association's namespace/ServiceAccount (the controller runs as kube-system/karpenter) */
  association: { namespace: string; serviceAccount: string }
  /** the Pod Identity statement added to the controller role's trust (else the IRSA trust alone) */
  trust: boolean
  /** the eks-pod-identity-agent add-on */
  agent: boolean
}

const RIGHT: Move = {
  association: { namespace: 'kube-system', serviceAccount: 'karpenter' },
  trust: true,
  agent: true,
}

/** The Pod Identity statement terraform-aws-eks's `controller_assume_role` and the EKS guide write. */
const POD_IDENTITY_STATEMENT = {
  Sid: 'PodIdentity',
  Effect: 'Allow',
  Principal: { Service: 'pods.eks.amazonaws.com' },
  Action: ['sts:AssumeRole', 'sts:TagSession'],
}

async function moveToPodIdentity(c: Ctx, move: Move) {
  const { aws, seed } = c
  await withoutIrsaAnnotation(c.bed)
  if (move.trust) {
    const irsa = JSON.parse(controllerTrustPolicy(seed.oidcProviderArn, seed.oidcIssuer)) as {
      Statement: unknown[]
    }
    await aws.iam.send(
      new UpdateAssumeRolePolicyCommand({
        RoleName: seed.controllerRoleName,
        PolicyDocument: JSON.stringify({
          Version: '2012-10-17',
          Statement: [...irsa.Statement, POD_IDENTITY_STATEMENT],
        }),
      }),
    )
  }
  if (move.agent)
    await aws.eks.send(
      new CreateAddonCommand({ clusterName: seed.clusterName, addonName: 'eks-pod-identity-agent' }),
    )
  await aws.eks.send(
    new CreatePodIdentityAssociationCommand({
      clusterName: seed.clusterName,
      ...move.association,
      roleArn: seed.controllerRoleArn,
    }),
  )
}

export const POD_IDENTITY_SCENARIOS: Scenario[] = [
  {
    check: 'pod-identity',
    title:
      'the association made for karpenter/karpenter (the module\'s `namespace = "karpenter"`), the chart in kube-system',
    source:
      "terraform-aws-modules/terraform-aws-eks#3064 (IRSA to Pod Identity, NoCredentialProviders), PR #3031 (the module's var.namespace), aws-ia/terraform-aws-eks-blueprints-addons PR #400 (karpenter to kube-system)",
    breakIt: (c) =>
      moveToPodIdentity(c, {
        ...RIGHT,
        association: { namespace: 'karpenter', serviceAccount: 'karpenter' },
      }),
    expect:
      /kube-system\/karpenter has no AWS identity.*is for karpenter\/karpenter \(role KarpenterControllerRole-demo\)/,
    fixable: true,
  },
  {
    check: 'pod-identity',
    title: "moved to Pod Identity with the role's IRSA trust kept alone (no pods.eks.amazonaws.com)",
    source:
      'terraform-aws-modules/terraform-aws-eks#3064 ("converting an existing Karpenter installation from IRSA to EKS Pod Identity?"), awslabs/cdk-eks-blueprints PR #1026 (pods.eks.amazonaws.com with sts:AssumeRole and sts:TagSession)',
    breakIt: (c) => moveToPodIdentity(c, { ...RIGHT, trust: false }),
    expect:
      /trust policy of KarpenterControllerRole-demo does not let pods\.eks\.amazonaws\.com perform sts:AssumeRole, sts:TagSession/,
  },
  {
    check: 'pod-identity',
    title:
      'the association and trust right, no eks-pod-identity-agent add-on (the controller hangs, then exits)',
    source:
      'aws/karpenter-provider-aws#6359, #5784 ("failing due to the missing eks-pod-identity-agent add-on"), terraform-aws-modules/terraform-aws-eks#3085',
    breakIt: (c) => moveToPodIdentity(c, { ...RIGHT, agent: false }),
    expect: /the eks-pod-identity-agent add-on is not installed on demo/,
  },
]
