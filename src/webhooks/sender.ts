// One delivery attempt: the event's body POSTed to the receiver, signed as Standard Webhooks
// specifies (the `standardwebhooks` package signs), to the address that was checked for it
// (src/webhooks/public-address.ts), with a deadline. Redirects are not followed: a 3xx is a
// failure like any answer outside 2xx.
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http'
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https'
import type { LookupAddress } from 'node:dns'
import type { LookupFunction } from 'node:net'
import { Webhook } from 'standardwebhooks'
import { packageInfo } from '../package-info.js'

export interface SendResult {
  /** The receiver's status, or null when it did not answer. */
  status: number | null
  durationMs: number
  /** Why the attempt failed, or null when the receiver answered 2xx. */
  error: string | null
}

/** A receiver's answer is read and dropped up to this many bytes; past it the connection is cut. */
const MAX_RESPONSE_BYTES = 64 * 1024
const USER_AGENT = `${packageInfo.name}-webhooks/${packageInfo.version}`

/** The `webhook-*` headers of one attempt at `now`. */
export function signedHeaders (secret: string, id: string, body: string, now: Date): Record<string, string> {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
    'webhook-signature': new Webhook(secret).sign(id, now, body)
  }
}

export class WebhookSender {
  readonly #http = new HttpAgent({ keepAlive: true, maxSockets: 64 })
  readonly #https = new HttpsAgent({ keepAlive: true, maxSockets: 64 })
  readonly #timeoutMs: number

  constructor (timeoutMs: number) {
    this.#timeoutMs = timeoutMs
  }

  /** POSTs `body` to `url`, connecting to `address` (checked for url's host), signed with `secret`. */
  async send (url: URL, address: LookupAddress, secret: string, id: string, body: string, signal?: AbortSignal): Promise<SendResult> {
    const started = performance.now()
    const headers = {
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(body)),
      'user-agent': USER_AGENT,
      ...signedHeaders(secret, id, body, new Date())
    }
    // The checked address, whatever the name resolves to by now (DNS rebinding).
    const lookup: LookupFunction = (_hostname, options, callback) => {
      if ((options as { all?: boolean }).all === true) (callback as unknown as (err: null, addresses: LookupAddress[]) => void)(null, [address])
      else callback(null, address.address, address.family)
    }
    const https = url.protocol === 'https:'
    const deadline = AbortSignal.timeout(this.#timeoutMs)
    const stop = signal === undefined ? deadline : AbortSignal.any([deadline, signal])
    const elapsed = (): number => Math.round(performance.now() - started)
    try {
      const status = await new Promise<number>((resolve, reject) => {
        const req = (https ? httpsRequest : httpRequest)(url, {
          method: 'POST', headers, lookup, agent: https ? this.#https : this.#http, signal: stop
        }, (res: IncomingMessage) => {
          let read = 0
          res.on('data', (chunk: Buffer) => {
            read += chunk.length
            if (read > MAX_RESPONSE_BYTES) res.destroy()
          })
          res.on('end', () => { resolve(res.statusCode ?? 0) })
          res.on('close', () => { resolve(res.statusCode ?? 0) })
          res.on('error', reject)
        })
        req.on('error', reject)
        req.end(body)
      })
      const ok = status >= 200 && status < 300
      return { status, durationMs: elapsed(), error: ok ? null : `HTTP ${status}` }
    } catch (err) {
      return { status: null, durationMs: elapsed(), error: describe(err, deadline.aborted, this.#timeoutMs) }
    }
  }

  close (): void {
    this.#http.destroy()
    this.#https.destroy()
  }
}

function describe (err: unknown, timedOut: boolean, timeoutMs: number): string {
  if (timedOut) return `no answer within ${timeoutMs} ms`
  const code = (err as NodeJS.ErrnoException).code
  if (code === 'ECONNREFUSED') return 'connection refused'
  if (code === 'ECONNRESET') return 'connection reset'
  if (code === 'ABORT_ERR') return 'aborted: the instance is shutting down'
  return code === undefined ? (err as Error).message : `${code}: ${(err as Error).message}`
}
