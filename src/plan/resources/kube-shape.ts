// The shape of a Kubernetes object karpctl wants: its own module, below the kube-object resource and
// the settings it shows, so neither imports the other for a type.
export interface KubeObject {
  apiVersion: string
  kind: string
  metadata: { name: string; namespace?: string; labels?: Record<string, string> }
  spec?: Record<string, unknown>
}
