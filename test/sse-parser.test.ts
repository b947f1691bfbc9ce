// The client's server-sent events parser (src/client/sse-parser.ts) on the format's edge cases:
// any line ending, pieces split anywhere, multi-line data, comments, a byte order mark, an id kept
// across events, a field with no colon, and nothing dispatched without data.
import t from 'tap'
import { type SseEvent, SseParser } from '../src/client/sse-parser.js'

function parse (pieces: string[]): { events: SseEvent[], comments: number } {
  const events: SseEvent[] = []
  let comments = 0
  const parser = new SseParser((event) => { events.push(event) }, () => { comments++ })
  for (const piece of pieces) parser.feed(piece)
  return { events, comments }
}

t.test('events with \\n, \\r\\n and \\r line endings, split anywhere, give the same events', async (t) => {
  const stream = '\uFEFF: hello\nevent: stats\nid: "v1-abc"\ndata: {"a":1}\n\n: keep-alive\n\ndata: line one\ndata: line two\n\n'
  const expected = [
    { event: 'stats', id: '"v1-abc"', data: '{"a":1}' },
    { event: 'message', id: '"v1-abc"', data: 'line one\nline two' }
  ]
  for (const [name, text] of [['\\n', stream], ['\\r\\n', stream.replaceAll('\n', '\r\n')], ['\\r', stream.replaceAll('\n', '\r')]]) {
    const whole = parse([text ?? ''])
    t.same(whole.events, expected, `${name}: in one piece`)
    t.equal(whole.comments, 2, `${name}: two comments`)
    const split = parse([...(text ?? '')]) // one character at a time: a \r\n split in two included
    t.same(split.events, expected, `${name}: one character at a time`)
  }
})

t.test('a field without a colon, unknown fields and an id with NUL; no event without data', async (t) => {
  const { events } = parse(['event: x\nretry: 10\nfoo: bar\n\n', 'data\n\n', 'id: a\0b\ndata: y\n\n'])
  t.same(events, [{ event: 'message', data: '', id: undefined }, { event: 'message', data: 'y', id: undefined }])
})
