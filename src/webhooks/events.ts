// The events a server sends out (webhooks, and typed events on its stats stream): their types,
// and the body each becomes, built from the fields a write script stored with it
// (src/redis/commands/includes/events.lua). The body is the same wherever it goes, and the same
// for every attempt of a delivery (its signature covers it).
import { userIdFromBoardMember } from '../redis/keys.js'
import type { WebhookEvent } from '../client/webhook-events.js'

/** The types a webhook may ask for (`ping` comes to every webhook, on request). */
export const EVENT_TYPES = ['member.leveled_up', 'member.rank_entered_top', 'season.ended'] as const
export type SubscribableEventType = typeof EVENT_TYPES[number]
export type EventType = SubscribableEventType | 'ping'

/** How many ranks `member.rank_entered_top` counts as the top (TOP in events.lua). */
export const TOP_RANKS = 10

/** One event, as a webhook's body and a stats stream's typed event carry it (the client's types: it imports nothing of the server). */
export type ServerEvent = WebhookEvent

/** An event as the stream holds it. */
export interface QueuedEvent {
  /** The stream entry's id (`<ms>-<n>`): the queue's order. */
  streamId: string
  /** The event's number in its server (includes/events.lua's `seq`): a gap says events were trimmed. */
  seq: number
  /** For `ping`: the one webhook it is for. */
  to: string | undefined
  event: ServerEvent
}

/** Whether stream id `a` (`<ms>-<n>`) comes before `b`. */
export function streamIdBefore (a: string, b: string): boolean {
  const [am = 0, an = 0] = a.split('-').map(Number)
  const [bm = 0, bn = 0] = b.split('-').map(Number)
  return am < bm || (am === bm && an < bn)
}

/** The stream id within an event id (`evt_<server>_<ms>_<n>`). */
export function streamIdOf (eventId: string): string {
  const [, , ms = '0', n = '0'] = eventId.split('_')
  return `${ms}-${n}`
}

/** An event's id from its server and stream id: unique in the installation, the same for every attempt. */
export function eventId (guildId: string, streamId: string): string {
  const [ms = '0', n = '0'] = streamId.split('-')
  return `evt_${guildId}_${ms}_${n}`
}

/** A stream entry's fields (name, value, name, value…) by name. */
function fieldsOf (flat: readonly string[]): Map<string, string> {
  const fields = new Map<string, string>()
  for (let i = 0; i + 1 < flat.length; i += 2) fields.set(flat[i] as string, flat[i + 1] as string)
  return fields
}

const nameOrNull = (name: string | undefined): string | null => name === undefined || name === '' ? null : name
const ids = (list: string | undefined): string[] => list === undefined || list === '' ? [] : list.split(',')
const iso = (ms: string | undefined): string => new Date(Number(ms)).toISOString()

/** The event `streamId` of server `guildId`, from its stored fields; undefined for a type this code does not know. */
export function queuedEvent (guildId: string, streamId: string, flat: readonly string[]): QueuedEvent | undefined {
  const f = fieldsOf(flat)
  const type = f.get('type')
  const head = { id: eventId(guildId, streamId), created_at: iso(streamId.split('-')[0]), server_id: guildId }
  const number = (name: string): number => Number(f.get(name) ?? NaN)
  const userId = (): string => userIdFromBoardMember(f.get('member') ?? '')
  let event: ServerEvent
  switch (type) {
    case 'member.leveled_up':
      event = {
        ...head,
        type,
        data: {
          user_id: userId(),
          username: nameOrNull(f.get('name')),
          old_level: number('from'),
          new_level: number('to'),
          xp: number('xp'),
          roles: { add: ids(f.get('roles_add')), remove: ids(f.get('roles_remove')) }
        }
      }
      break
    case 'member.rank_entered_top':
      event = { ...head, type, data: { user_id: userId(), username: nameOrNull(f.get('name')), rank: number('rank'), xp: number('xp') } }
      break
    case 'season.ended': {
      // cjson writes an empty list as `{}`.
      const rows = JSON.parse(f.get('top') ?? '[]') as Array<[string, string, string]> | Record<string, never>
      event = {
        ...head,
        type,
        data: {
          season: { id: number('season'), name: f.get('name') ?? '', started_at: iso(f.get('started_at')), ended_at: iso(f.get('ended_at')) },
          top: (Array.isArray(rows) ? rows : []).map(([member, xp, name], i) => ({
            rank: i + 1, user_id: userIdFromBoardMember(member), username: nameOrNull(name), xp: Number(xp)
          }))
        }
      }
      break
    }
    case 'ping':
      event = { ...head, type, data: { webhook_id: f.get('webhook') ?? '' } }
      break
    default:
      return undefined
  }
  return { streamId, seq: number('seq'), to: type === 'ping' ? f.get('webhook') : undefined, event }
}
