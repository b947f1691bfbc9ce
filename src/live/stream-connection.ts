// A stream's connection gives Node's HTTP parser back once the stream is open. Node keeps a
// parser on every connection until it closes, to read the next request on it: a native object
// of some 10 KB on Node 24, the largest thing an open stream held. A stream's connection carries
// no next request (its response is the connection's last, `Connection: close`), so its parser
// goes back to Node's pool the way Node's own upgrade handling (`node:_http_server`,
// onParserExecuteCommon) gives it back, and the connection is then read only to see it end.
//
// This reaches into node:http's internals: the parser on `socket.parser`, the listeners Node
// adds to a connection, `freeParser` from node:_http_common. Each is checked first; when one is
// not as expected the connection keeps its parser (correct, with the memory) and the reason is
// returned, for the service to log.
import { createRequire } from 'node:module'
import type { IncomingMessage } from 'node:http'
import type { Socket } from 'node:net'

type FreeParser = (parser: object, request: IncomingMessage | null, socket: Socket) => void
const { freeParser } = createRequire(import.meta.url)('node:_http_common') as { freeParser?: FreeParser }

/** Node's listeners on a server connection that drive its parser, by the names Node gives them. */
const PARSER_LISTENERS = [
  ['data', 'bound socketOnData'],
  ['end', 'bound socketOnEnd'],
  // Pause and resume the reads the parser consumes in C++.
  ['pause', 'onSocketPause'],
  ['resume', 'onSocketResume']
] as const

/** The connection's one listener of `event` named `name`, if it has exactly one. */
function listenerNamed (socket: Socket, event: string, name: string): ((...args: unknown[]) => void) | undefined {
  const found = socket.listeners(event).filter((listener) => listener.name === name)
  return found.length === 1 ? found[0] as (...args: unknown[]) => void : undefined
}

/** Bytes a client sends after its stream's request: no request this connection will answer. */
function discard (): void {}

/**
 * Gives `request`'s connection's parser back to Node, once the response is under way with
 * `Connection: close`. Undefined when it was given back; else why not (the connection keeps it).
 */
export function releaseParser (request: IncomingMessage): string | undefined {
  if (typeof freeParser !== 'function') return 'node:_http_common has no freeParser'
  // A request whose body is still coming needs its parser to the end.
  if (!request.complete) return 'the request is not complete'
  const socket = request.socket as Socket & { parser?: object | null }
  const parser = socket.parser
  if (parser === undefined || parser === null) return 'the connection has no parser'
  const listeners = PARSER_LISTENERS.map(([event, name]) => [event, listenerNamed(socket, event, name)] as const)
  if (listeners.some(([, listener]) => listener === undefined)) return "the connection's listeners are not the ones Node's HTTP server adds"
  for (const [event, listener] of listeners) if (listener !== undefined) socket.removeListener(event, listener)
  // Reads go back to the socket, then the parser to Node's pool (Node's own order).
  freeParser(parser, request, socket)
  socket.on('data', discard)
  // What Node's listener did at the client's end of the connection (the server not half-open).
  socket.on('end', () => { socket.end() })
  return undefined
}
