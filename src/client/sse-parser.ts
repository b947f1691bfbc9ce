// A server-sent events parser (the WHATWG event-stream format): fed text as it arrives, it calls
// back with each complete event. The client package has no dependencies, so it is here rather
// than a library; the tests read the service's streams with eventsource-parser, independently.

const LF = 10
const CR = 13

export interface SseEvent {
  /** The `event:` field; `message` when none was sent. */
  event: string
  data: string
  /** The `id:` field, when the event had one. */
  id: string | undefined
}

export class SseParser {
  readonly #onEvent: (event: SseEvent) => void
  readonly #onComment: (() => void) | undefined
  #buffer = ''
  #event = ''
  #data: string[] = []
  #id: string | undefined
  #first = true
  #afterCr = false

  constructor (onEvent: (event: SseEvent) => void, onComment?: () => void) {
    this.#onEvent = onEvent
    this.#onComment = onComment
  }

  /** Takes the next piece of the stream, complete lines or not. */
  feed (text: string): void {
    if (this.#first && text.length > 0) {
      this.#first = false
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1) // a byte order mark
    }
    // Lines end with \r\n, \n or \r: a \r ends its line at once, and a \n right after it is skipped.
    let start = 0
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i)
      if (this.#afterCr) {
        this.#afterCr = false
        if (c === LF) { start = i + 1; continue }
      }
      if (c !== LF && c !== CR) continue
      this.#line(this.#buffer + text.slice(start, i))
      this.#buffer = ''
      start = i + 1
      this.#afterCr = c === CR
    }
    this.#buffer += text.slice(start)
  }

  #line (line: string): void {
    if (line === '') { this.#dispatch(); return }
    if (line.startsWith(':')) { this.#onComment?.(); return }
    const colon = line.indexOf(':')
    const field = colon === -1 ? line : line.slice(0, colon)
    let value = colon === -1 ? '' : line.slice(colon + 1)
    if (value.startsWith(' ')) value = value.slice(1)
    if (field === 'event') this.#event = value
    else if (field === 'data') this.#data.push(value)
    else if (field === 'id' && !value.includes('\0')) this.#id = value
  }

  #dispatch (): void {
    if (this.#data.length > 0) this.#onEvent({ event: this.#event === '' ? 'message' : this.#event, data: this.#data.join('\n'), id: this.#id })
    this.#event = ''
    this.#data = []
  }
}
