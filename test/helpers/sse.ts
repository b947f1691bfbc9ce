// A raw server-sent events reader for tests: opens a stream with node:http (so the test sees the
// status and headers as sent), parses it with eventsource-parser, and lets a test wait for the
// next event, a comment, or the end. Closed in t.teardown.
import { request as httpRequest, type IncomingHttpHeaders, type IncomingMessage } from 'node:http'
import { createParser, type EventSourceMessage } from 'eventsource-parser'
import type { Test } from 'tap'

export interface StreamEvent extends EventSourceMessage {
  /** ms since the stream was opened */
  at: number
}

export class SseReader {
  readonly status: number
  readonly headers: IncomingHttpHeaders
  /** The body of a refusal (not a stream). */
  readonly body: string
  readonly events: StreamEvent[] = []
  readonly comments: string[] = []
  ended = false
  readonly #response: IncomingMessage
  #waiters: Array<() => void> = []

  private constructor (response: IncomingMessage, body: string, opened: number) {
    this.#response = response
    this.status = response.statusCode ?? 0
    this.headers = response.headers
    this.body = body
    const parser = createParser({
      onEvent: (event) => { this.events.push({ ...event, at: Date.now() - opened }); this.#wake() },
      onComment: (comment) => { this.comments.push(comment); this.#wake() }
    })
    if (this.status !== 200) return
    response.setEncoding('utf8')
    response.on('data', (chunk: string) => { parser.feed(chunk) })
    const end = (): void => { this.ended = true; this.#wake() }
    response.on('end', end)
    response.on('close', end)
    response.on('error', end)
  }

  /**
   * Opens `url` (path and query on `base`) and resolves once the response's headers have come.
   * With `socketPath`, through that Unix socket (`base` then names only the host).
   */
  static async open (t: Test, base: string, path: string, headers: Record<string, string>, socketPath?: string): Promise<SseReader> {
    const opened = Date.now()
    const url = new URL(path, base)
    return await new Promise((resolve, reject) => {
      const req = httpRequest(url, { headers: { accept: 'text/event-stream', ...headers }, agent: false, socketPath }, (response) => {
        if (response.statusCode === 200) {
          const reader = new SseReader(response, '', opened)
          t.teardown(() => { reader.close() })
          resolve(reader)
          return
        }
        let body = ''
        response.setEncoding('utf8')
        response.on('data', (chunk: string) => { body += chunk })
        response.on('end', () => { resolve(new SseReader(response, body, opened)) })
      })
      req.on('error', reject)
      req.end()
    })
  }

  /** Resolves once `check` holds (checked at each event, comment and the end), or rejects after `timeoutMs`. */
  async until (check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs
    while (!check()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.max(0, deadline - Date.now()) + 1)
        this.#waiters.push(() => { clearTimeout(timer); resolve() })
      })
    }
  }

  /** The next event after the `count` already seen. */
  async event (count: number, timeoutMs?: number): Promise<StreamEvent> {
    await this.until(() => this.events.length > count, `event ${count + 1}`, timeoutMs)
    return this.events[count] as StreamEvent
  }

  /** Stops reading: what the server writes stays in the socket's buffers, then in the server. */
  pause (): void {
    this.#response.pause()
  }

  resume (): void {
    this.#response.resume()
  }

  close (): void {
    this.#response.destroy()
  }

  #wake (): void {
    for (const wake of this.#waiters.splice(0)) wake()
  }
}
