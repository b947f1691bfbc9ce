// The events the service sends to webhooks and, as typed events, on a server's stats stream.
// Declared here, where the client (which imports nothing of the server) can have them; the
// service's src/webhooks/events.ts builds its bodies as these types.

interface EventHead {
  /** Unique in the installation, the same for every attempt (the `webhook-id` header): drop a repeat by it. */
  id: string
  created_at: string
  server_id: string
}

export interface MemberLeveledUpEvent extends EventHead {
  type: 'member.leveled_up'
  data: {
    user_id: string
    username: string | null
    old_level: number
    new_level: number
    xp: number
    /** Role ids the bot must add and remove (role rewards). */
    roles: { add: string[], remove: string[] }
  }
}

export interface MemberRankEnteredTopEvent extends EventHead {
  type: 'member.rank_entered_top'
  data: { user_id: string, username: string | null, rank: number, xp: number }
}

export interface SeasonEndedEvent extends EventHead {
  type: 'season.ended'
  data: {
    season: { id: number, name: string, started_at: string, ended_at: string }
    top: Array<{ rank: number, user_id: string, username: string | null, xp: number }>
  }
}

export interface PingEvent extends EventHead {
  type: 'ping'
  data: { webhook_id: string }
}

export type WebhookEvent = MemberLeveledUpEvent | MemberRankEnteredTopEvent | SeasonEndedEvent | PingEvent
