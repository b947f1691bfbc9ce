// The client's types (src/client/types.ts) are generated from the service's schemas: the file is
// what `npm run client-types` makes now, and each body type is the very type the reader returns
// (checked by the type checker: `npm run typecheck` fails when they drift apart).
import t from 'tap'
import { readFileSync } from 'node:fs'
import { CLIENT_ENDPOINTS_PATH, CLIENT_TYPES_PATH, clientEndpoints, clientTypes } from '../scripts/client-types.js'
import type * as Client from '../src/client/index.js'
import type * as Reader from '../src/reader/leaderboard-reader.js'
import type { PublicErrorCode as ErrorCode } from '../src/http/error-codes.js'
import type { Period } from '../src/periods/periods.js'
import { reads } from '../src/routes/api/reads.js'

/** True when A and B are the same type (each assignable to the other). */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false
const same: Record<string, true> = {
  LeaderboardEntry: true satisfies Same<Client.LeaderboardEntry, Reader.LeaderboardEntry>,
  LeaderboardPage: true satisfies Same<Client.LeaderboardPage, Reader.LeaderboardPage>,
  AroundPage: true satisfies Same<Client.AroundPage, Reader.Around>,
  MemberRecord: true satisfies Same<Client.MemberRecord, Reader.MemberRecord>,
  MemberList: true satisfies Same<Client.MemberList, Reader.MemberList>,
  GuildStats: true satisfies Same<Client.GuildStats, Reader.GuildStats>,
  RoleRewards: true satisfies Same<Client.RoleRewards, Reader.RoleRewards>,
  ErrorCode: true satisfies Same<Client.ErrorCode, ErrorCode>,
  Period: true satisfies Same<Client.Period, Period>
}

t.test('src/client/types.ts is what npm run client-types makes from the schemas', async (t) => {
  t.equal(readFileSync(CLIENT_TYPES_PATH, 'utf8'), await clientTypes(), 'run `npm run client-types` after changing a schema')
  t.equal(Object.keys(same).length, 9, 'the body types, the error codes and the periods are the reader\'s own (checked by tsc)')
})

t.test('src/client/endpoints.ts is what npm run client-types makes from the read declarations: a method per endpoint and stream', async (t) => {
  t.equal(readFileSync(CLIENT_ENDPOINTS_PATH, 'utf8'), clientEndpoints(), 'run `npm run client-types` after changing src/routes/api/reads.ts')
  const client = new (await import('../src/client/index.js')).LeaderboardClient({ baseUrl: 'http://127.0.0.1:9/api/v1', apiKey: 'k' })
  for (const read of reads) {
    t.type((client as unknown as Record<string, unknown>)[read.client.method], 'function', `${read.operationId}: client.${read.client.method}`)
    if (read.stream !== undefined) t.type((client as unknown as Record<string, unknown>)[read.client.watch?.method ?? ''], 'function', `${read.stream.operationId}: a watch method`)
  }
})
