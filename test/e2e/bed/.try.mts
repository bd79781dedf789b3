import { startBed } from './index.js'
const t0 = Date.now()
const bed = await startBed()
console.log('ready', Date.now() - t0, bed.kubeServer, Object.keys(bed.procs))
console.log((await bed.kube.request('GET', '/version')).text)
console.log((await bed.kube.list('/api/v1/namespaces')).map((n) => n.metadata.name))
await bed.stop()
console.log('stopped', Date.now() - t0)
