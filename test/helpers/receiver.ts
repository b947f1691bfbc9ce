// A webhook receiver for tests: a node:http server on loopback that keeps every request it gets
// (headers and raw body) and answers with the status `answer` gives (200 unless told), released
// in t.teardown.
import { createServer, type IncomingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import type { Test } from 'tap'

export interface Received {
  headers: IncomingHttpHeaders
  body: string
  /** The body parsed. */
  json: { id: string, type: string, created_at: string, server_id: string, data: Record<string, unknown> }
  /** What it was answered (0: not at all). */
  status: number
}

export interface Receiver {
  url: string
  port: number
  received: Received[]
  /** The status for the next request (n: requests received before it); 0 leaves it unanswered (a receiver that hangs). */
  answer: (request: Received, n: number) => number
  close: () => Promise<void>
}

export async function startReceiver (t: Test, answer: Receiver['answer'] = () => 200, port = 0): Promise<Receiver> {
  const receiver: Receiver = { url: '', port: 0, received: [], answer, close: async () => {} }
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8')
      const got: Received = { headers: req.headers, body, json: JSON.parse(body) as Received['json'], status: 0 }
      const status = receiver.answer(got, receiver.received.length)
      got.status = status
      receiver.received.push(got)
      if (status !== 0) res.writeHead(status).end()
    })
  })
  server.keepAliveTimeout = 60_000
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve))
  receiver.port = (server.address() as AddressInfo).port
  receiver.url = `http://127.0.0.1:${receiver.port}/hook`
  let closed = false
  receiver.close = async () => {
    if (closed) return
    closed = true
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => { resolve() }))
  }
  t.teardown(receiver.close)
  return receiver
}

/**
 * Waits until `check` is true, polling; fails after `ms` (generous: the suite runs on loaded
 * machines), or, given `progress`, after `ms` in which its value did not change: a wait for many
 * deliveries bounds a stall, not the time a busy machine takes to make them.
 */
export async function until (check: () => boolean | Promise<boolean>, what: string, ms = 30_000, progress?: () => unknown): Promise<void> {
  let end = Date.now() + ms
  let last = progress?.()
  while (!await check()) {
    const now = progress?.()
    if (now !== last) {
      last = now
      end = Date.now() + ms
    }
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}${progress === undefined ? '' : ` (${String(last)} so far)`}`)
    await sleep(20)
  }
}
