// What a plan step declares before it runs (its address, name, group, order, desired state and the
// IAM permissions it needs): the part of a Resource a shape test pins, without its functions.
import type { Resource } from '../../src/plan/types.js'

export function shapeOf<S>(r: Resource<S>) {
  return {
    address: r.address,
    kind: r.kind,
    name: r.name,
    group: r.group,
    dependsOn: r.dependsOn,
    desired: r.desired,
    // Only a step that shows documents has the key, so a shape without them need not spell it out.
    ...(r.documents === undefined ? {} : { documents: r.documents }),
    permissions: r.permissions,
  }
}
