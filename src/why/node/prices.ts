// The on-demand price Karpenter puts on an instance type when it has no Pricing API answer: the AWS
// provider's static list (aws/karpenter-provider-aws v1.14.1 pkg/providers/pricing: Reset takes the
// region's table, else us-east-1's; ISOLATED_VPC never updates it). Spot prices are read live from
// DescribeSpotPriceHistory even then, so they are not judged here.
import { STATIC_ON_DEMAND_PRICES } from '../../desired/karpenter-prices.generated.js'

const tables = new Map<string, Map<string, number>>()

function table(region: string): { region: string; prices: Map<string, number> } {
  const r = STATIC_ON_DEMAND_PRICES[region] !== undefined ? region : 'us-east-1'
  let t = tables.get(r)
  if (!t) {
    t = new Map()
    for (const pair of (STATIC_ON_DEMAND_PRICES[r] ?? '').split(' ')) {
      const [type, price] = pair.split('=')
      if (type && price) t.set(type, Number(price))
    }
    tables.set(r, t)
  }
  return { region: r, prices: t }
}

/** USD per hour on demand, and the table it came from (`us-east-1` for a region the list lacks). */
export function staticOnDemandPrice(region: string, type: string): { price?: number; table: string } {
  const t = table(region)
  const price = t.prices.get(type)
  return price === undefined ? { table: t.region } : { price, table: t.region }
}

export const dollars = (p: number) => `$${p.toFixed(4).replace(/0{1,2}$/, '')}/h`
