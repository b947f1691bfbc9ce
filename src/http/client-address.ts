// The address of a request's client (a normalized IP, see src/client-address.ts), and Fastify's
// trustProxy for TRUST_PROXY.
import type { FastifyRequest, FastifyServerOptions } from 'fastify'
import type { Config } from '../config.js'
import { type ClientAddress, normalizeAddress } from '../client-address.js'

/**
 * The address of the client behind `request`: Fastify's `request.ip` (from X-Forwarded-For
 * only as far as TRUST_PROXY trusts it) when it parses as an IP, else the socket's peer.
 */
export function clientAddress (request: FastifyRequest): ClientAddress {
  return normalizeAddress(request.ip) ??
    normalizeAddress(request.socket.remoteAddress) ??
    ('0.0.0.0' as ClientAddress) // no peer address at all (a closed socket): one shared bucket
}

/**
 * Fastify's trustProxy for TRUST_PROXY. Fastify 5.12 dropped hop counts (a number now trusts
 * nothing), so a count becomes the function it used to be: the `hops` nearest addresses of the
 * X-Forwarded-For chain are proxies, the next one is the client. Safe only when the service
 * cannot be reached but through those proxies (see docs/operating.md, "Client addresses").
 */
export function trustProxyOption (trustProxy: Config['trustProxy']): FastifyServerOptions['trustProxy'] {
  if (typeof trustProxy !== 'number') return trustProxy
  return (_address: string, hop: number) => hop < trustProxy
}
