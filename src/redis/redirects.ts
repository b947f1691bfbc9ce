// The one place the service follows Redis's "sent to the wrong place, send it again" replies, for
// every command of a client createRedis makes: reads, writes, scripts, the limiter, the
// Idempotency-Key claim, the token and key stores alike. Such a reply means the command did not
// run, so sending it again is always safe (a write script's operation id would make even a
// second run a replay):
// - a Redis Cluster resharding: `ASK` (the key has moved to the importing master), `MOVED` (the
//   slot has), `TRYAGAIN` (a script's keys are split between the two masters for now);
// - `NOSCRIPT`: the node has not loaded the script (a new owner of a slot, a restart, a
//   `SCRIPT FLUSH`). ioredis marks a connection as having a script when it writes the EVAL, so
//   an EVAL a resharding refused leaves it sending EVALSHA to a node that never loaded it.
//
// ioredis follows the first three for a command sent alone, but not for one sent in a pipeline,
// and with auto-pipelining every command is: a pipeline whose other commands succeeded hands the
// redirection to the caller, and one whose other commands were all reads is sent again whole to
// the ASK target, where those reads find keys that have not moved yet missing (a token read as
// absent, a 401). So each command's error is looked at here, at `sendCommand`, the method every
// command goes through on its way to a socket (auto-pipelined, in an explicit pipeline, or alone),
// before its pipeline or its caller sees it: a redirected command is sent again alone, where
// ioredis follows further redirections itself, and only its final answer reaches the caller.
//
// Why here and not around each call: a wrapper per call site is one more thing each new caller
// must remember (the write scripts and the Idempotency-Key claim had none, and a write answered
// 500 NOSCRIPT during a resharding), and it cannot undo a pipeline's resend of reads to the wrong
// node. This is installed on the client's own instance (createRedis's clients only), through
// ioredis's public `sendCommand` and `Command#reject`: no other client in the process changes.
// Commands of a transaction (MULTI … EXEC) are left alone: one of them sent again alone would
// run outside it.
//
// A command may also know how to recover from a reply of its own (a `recover` method, as
// ./functions.ts's FCALL has: "function not found" loads the library on the node that answered,
// a refusal turns it into EVAL): it is sent again, the same way, once that is done.
import type { Cluster, Command, Redis } from 'ioredis'

/** Replies that mean "not run here: send it again" (see the top of this file). */
const REDIRECTION = /^(?:ASK|MOVED|TRYAGAIN|NOSCRIPT) /
/**
 * Times one command is sent again from here. ioredis then follows up to its own limit of
 * redirections per try (16); this bounds what it hands back (`NOSCRIPT` again and again is a
 * bug, not a resharding). The command's timeout still bounds the whole.
 */
const MAX_RESENDS = 5
/** The command's own reject, kept on it: one function per client, none made per command. */
const REJECT = Symbol('reject')
/** The promise that reject settles: a cluster's pipeline sending a command again makes it a new one (Command#initPromise). */
const PROMISE = Symbol('promise')

type TrackedCommand = Command & {
  [REJECT]?: (err: Error) => void
  [PROMISE]?: Promise<unknown>
  /** Makes the command ready to be sent again after `err`, or undefined when `err` is not its to handle. */
  recover?: (err: Error, client: Redis | Cluster) => Promise<void> | undefined
}
type SendCommand = (command: Command, stream?: unknown, node?: unknown) => unknown

const following = new WeakSet<object>()

/** Makes `client` send a redirected command again (see the top of this file). Once per client. */
export function followRedirections (client: Redis | Cluster): void {
  if (following.has(client)) return
  following.add(client)
  const target = client as unknown as { sendCommand: SendCommand }
  const send: SendCommand = target.sendCommand.bind(client)
  const resends = new WeakMap<Command, number>()
  /** Commands whose caller has its error. */
  const given = new WeakSet<Command>()

  // Called as the command's reject (ioredis calls it as a method of the command).
  function onError (this: TrackedCommand, err: Error): void {
    const sent = resends.get(this) ?? 0
    if (sent < MAX_RESENDS && REDIRECTION.test(err.message)) {
      resends.set(this, sent + 1)
      send(this) // alone: ioredis picks the node by the slot and follows what comes next
      return
    }
    const recovery = sent < MAX_RESENDS ? this.recover?.(err, client) : undefined
    if (recovery !== undefined) {
      resends.set(this, sent + 1)
      // Not sent again once its caller has its answer (the command timed out meanwhile).
      recovery.then(() => { if (!given.has(this)) send(this) }, (failed: Error) => { giveUp(this, failed) })
      return
    }
    giveUp(this, err)
  }

  function giveUp (command: TrackedCommand, err: Error): void {
    given.add(command);
    (command[REJECT] as (err: Error) => void).call(command, err)
  }

  target.sendCommand = function sendCommand (command: TrackedCommand, stream?: unknown, node?: unknown) {
    // Once per promise: a cluster's pipeline that sends its commands again after a common error
    // ("Connection is closed" in a failover) gives each a new promise and reject, which would
    // otherwise hand a later redirection, or "function not found", straight to the caller.
    if (command[PROMISE] !== command.promise && !command.inTransaction && command.name !== 'multi' && command.name !== 'exec') {
      command[REJECT] = command.reject
      command[PROMISE] = command.promise
      command.reject = onError
    }
    return send(command, stream, node)
  }
}
