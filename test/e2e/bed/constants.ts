// Names shared by the bed, the AWS seed and the Kubernetes seed.
export const ACCOUNT_ID = '123456789012'
export const REGION = 'us-west-2'
export const CLUSTER_NAME = 'demo'
export const DISCOVERY_TAG = 'karpenter.sh/discovery'
