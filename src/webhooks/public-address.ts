// Where a webhook may be sent: its URL's host must resolve to public addresses only, so that a
// token holder cannot make the service call into its own network (the metadata service at
// 169.254.169.254, Redis on loopback, the office's 10.0.0.0/8). Checked when the webhook is
// made and again at every delivery, and the delivery connects to the very address that was
// checked (a name that resolved to a public address at the check and to a private one a moment
// later, DNS rebinding, gains nothing). WEBHOOK_ALLOW_PRIVATE lifts the rule (tests, a private
// deployment whose receivers are on its own network).
import { lookup as dnsLookup, type LookupAddress } from 'node:dns'
import { isIP } from 'node:net'
import ipaddr from 'ipaddr.js'

/** Resolves a host name to every address (dns.lookup with `all: true`); tests pass their own. */
export type Resolver = (hostname: string) => Promise<LookupAddress[]>

export const systemResolver: Resolver = async (hostname) => await new Promise((resolve, reject) => {
  dnsLookup(hostname, { all: true, verbatim: true }, (err, addresses) => { if (err === null) resolve(addresses); else reject(err) })
})

/**
 * Whether `address` is a public unicast address: ipaddr.js's `unicast` range, which leaves out
 * private, loopback, link-local, unique-local, carrier-grade NAT, multicast, documentation,
 * benchmarking and reserved ranges. An address that embeds an IPv4 one (IPv4-mapped, NAT64,
 * 6to4, Teredo) is refused whole rather than unwrapped: no public receiver needs one.
 */
export function isPublicAddress (address: string): boolean {
  if (!ipaddr.isValid(address)) return false
  return ipaddr.parse(address).range() === 'unicast'
}

/** A host that may not receive webhooks, or cannot be resolved. */
export class AddressRefusedError extends Error {}

/**
 * The address to connect to for `hostname`: its first resolved address, when every address it
 * resolves to is public (or `allowPrivate`). An IP literal is checked as it is.
 */
export async function checkedAddress (hostname: string, allowPrivate: boolean, resolve: Resolver = systemResolver): Promise<LookupAddress> {
  const host = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname
  let addresses: LookupAddress[]
  const family = isIP(host)
  if (family !== 0) {
    addresses = [{ address: host, family }]
  } else {
    try {
      addresses = await resolve(host)
    } catch (err) {
      throw new AddressRefusedError(`${host} does not resolve (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`)
    }
  }
  const [first] = addresses
  if (first === undefined) throw new AddressRefusedError(`${host} does not resolve`)
  if (!allowPrivate) {
    const refused = addresses.find((a) => !isPublicAddress(a.address))
    if (refused !== undefined) {
      throw new AddressRefusedError(`${host} resolves to ${refused.address}, which is not a public address ` +
        '(private, loopback, link-local and reserved addresses are refused unless WEBHOOK_ALLOW_PRIVATE is set)')
    }
  }
  return first
}
