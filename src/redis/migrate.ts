// In-place migration of the data under one key prefix to the layout this code uses
// (SCHEMA_VERSION in ./keys.ts). The server runs it at start and the CLI as `migrate`; both are
// safe to run at once and again: each server's move is one atomic script that finds nothing to
// do the second time, and the schema key is written only after every server has moved.
//
// Schema 1 kept names, streaks and claims in three hashes keyed by user_id; schema 2 keeps one
// record per member in a hash keyed by the board member, and a data version per server.
import { Cluster } from 'ioredis'
import type { RedisClient } from './client.js'
import { type KeyBuilder, SCHEMA_VERSION } from './keys.js'
import { defineCommands } from './scripts.js'

export interface MigrationResult {
  /** The schema found before (0: nothing under the prefix yet). */
  from: number
  to: number
  /** Servers whose data was moved. */
  guilds: number
  /** Member records moved. */
  members: number
}

const SCAN_COUNT = 1000

/** The schema of the data under the prefix: the schema key, else 1 if any data exists, else 0. */
export async function schemaVersion (redis: RedisClient, keys: KeyBuilder): Promise<number> {
  const stored = await redis.get(keys.schema)
  if (stored !== null) return Number(stored)
  for await (const found of scanBoards(redis, keys)) if (found.length > 0) return 1
  return 0
}

/** Brings the data under the prefix to SCHEMA_VERSION; `onGuild` is called after each server. */
export async function migrate (redis: RedisClient, keys: KeyBuilder, onGuild?: (guildId: string, members: number) => void): Promise<MigrationResult> {
  defineCommands(redis)
  const from = await schemaVersion(redis, keys)
  if (from > SCHEMA_VERSION) {
    throw new Error(`the data under prefix ${keys.prefix} has schema ${from}, newer than this code's ${SCHEMA_VERSION}: upgrade the service`)
  }
  const result: MigrationResult = { from, to: SCHEMA_VERSION, guilds: 0, members: 0 }
  if (from === 1) {
    for await (const boards of scanBoards(redis, keys)) {
      for (const board of boards) {
        const guildId = keys.guildOfBoard(board)
        if (guildId === null) continue
        const legacy = keys.legacyGuild(guildId)
        const k = keys.guild(guildId)
        const moved = await redis.migrateGuild(legacy.names, legacy.streaks, legacy.claims, k.members, k.board, k.version)
        result.guilds++
        result.members += moved
        onGuild?.(guildId, moved)
      }
    }
  }
  if (from !== SCHEMA_VERSION) await redis.set(keys.schema, String(SCHEMA_VERSION))
  return result
}

/** Batches of board keys under the prefix, from every master of a cluster. */
async function * scanBoards (redis: RedisClient, keys: KeyBuilder): AsyncGenerator<string[]> {
  const nodes = redis instanceof Cluster ? redis.nodes('master') : [redis]
  for (const node of nodes) {
    let cursor = '0'
    do {
      const [next, found] = await node.scan(cursor, 'MATCH', keys.boardPattern, 'COUNT', SCAN_COUNT)
      cursor = next
      yield found
    } while (cursor !== '0')
  }
}
