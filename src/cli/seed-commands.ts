// Filling servers with realistic data: seed (any server) and demo (the one-shot demo setup).
import { type Command, Option } from 'commander'
import { activeDemoKey, DEMO_GUILD_ID, DEMO_MEMBERS, prepareDemo, seasonCurlLines, seedDemo } from '../demo/prepare-demo.js'
import { CURVES, type Curve } from '../levels/curves.js'
import { MAX_SEED_MEMBERS, seedGuild } from '../seed/seed-guild.js'
import { LeaderboardWriter } from '../writer/leaderboard-writer.js'
import { withRedis } from './connection.js'
import { count, print, printJson, timing } from './output.js'
import { progressReporter } from './progress.js'
import * as parse from './parsers.js'

export function addSeedCommands (program: Command): void {
  program.command('seed')
    .description('add N realistic members (names, long-tailed XP, ties, streaks) to a server')
    .addOption(new Option('--guild <id>', 'server to fill').argParser(parse.guildId).makeOptionMandatory())
    .addOption(new Option('--members <n>', `members to add, 1 to ${MAX_SEED_MEMBERS}`)
      .argParser(parse.integer('members', 1, MAX_SEED_MEMBERS)).makeOptionMandatory())
    .addOption(new Option('--curve <name>', "also set the server's XP curve").choices(CURVES))
    .option('--seed <text>', 'seed of the random generator: the same seed gives the same members')
    .option('--json', 'print the summary as one line of JSON')
    .action(async (opts: { guild: string, members: number, curve?: Curve, seed?: string, json?: boolean }) => {
      await withRedis(async ({ redis, keys }) => {
        const progress = progressReporter('seeding', { unit: 'members' })
        try {
          const s = await seedGuild(new LeaderboardWriter(redis, keys), {
            guildId: opts.guild, members: opts.members, curve: opts.curve, seed: opts.seed, onProgress: progress.update
          })
          progress.stop()
          if (opts.json === true) {
            printJson({
              guild_id: s.guildId,
              members: s.members,
              total_xp: s.totalXp,
              zero_xp: s.zeroXp,
              tied: s.tied,
              active_streaks: s.activeStreaks,
              broken_streaks: s.brokenStreaks,
              recent: s.recent,
              seed: s.seed,
              elapsed_ms: Math.round(s.elapsedMs)
            })
            return
          }
          print(`seeded ${count(s.members, 'member')} into ${s.guildId} ${timing(s.elapsedMs, s.members, 'members')}, seed ${s.seed}`)
          print(`  ${s.zeroXp} with 0 XP, ${s.tied} sharing their XP with another member, ${s.activeStreaks} with a current streak, ${s.brokenStreaks} with a broken one, ` +
            `${s.recent} with XP this week`)
        } finally {
          progress.stop()
        }
      })
    })

  program.command('demo')
    .description(`seed the demo server (if empty) with ${DEMO_MEMBERS} members, create a professional API key for it and print a curl line`)
    .addOption(new Option('--guild <id>', 'demo server id').default(DEMO_GUILD_ID).argParser(parse.guildId))
    .option('--base-url <url>', 'where the API is reached', 'http://localhost:3000')
    .option('--keep-key', 'make no key when the demo server already has a working one (its id is printed; `keys rotate ID` gives it a new secret)')
    .option('--json', 'print one line of JSON, with the new key')
    .action(async (opts: { guild: string, baseUrl: string, keepKey?: boolean, json?: boolean }) => {
      await withRedis(async ({ redis, keys }) => {
        const progress = progressReporter('seeding demo', { unit: 'members' })
        let demo
        try {
          const existing = opts.keepKey === true ? await activeDemoKey(redis, keys, opts.guild) : undefined
          if (existing !== undefined) {
            // Nothing to print but the id: the secret is stored only as a hash.
            const seeded = await seedDemo({ redis, keys, guildId: opts.guild, onProgress: progress.update })
            progress.stop()
            if (opts.json === true) {
              printJson({ guild_id: seeded.guildId, seeded: seeded.seeded, members: seeded.members, key_id: existing.id, key: null, curl: null })
              return
            }
            print(seededLine(seeded))
            print(`API key ${existing.id} (plan professional) made by an earlier run still works; its secret was shown then. ` +
              `For a new secret under the same id: keys rotate ${existing.id}`)
            return
          }
          demo = await prepareDemo({ redis, keys, guildId: opts.guild, baseUrl: opts.baseUrl, onProgress: progress.update })
        } finally {
          progress.stop()
        }
        if (opts.json === true) {
          printJson({ guild_id: demo.guildId, seeded: demo.seeded, members: demo.members, key_id: demo.keyId, key: demo.key, curl: demo.curl })
          return
        }
        print(seededLine(demo))
        print(`API key (plan professional, shown only this once): ${demo.key}`)
        print(demo.curl)
        for (const line of await seasonCurlLines(redis, keys, demo)) print(line)
      })
    })
}

function seededLine (demo: { guildId: string, seeded: boolean, members: number }): string {
  return demo.seeded
    ? `demo server ${demo.guildId}: seeded ${count(demo.members, 'member')}`
    : `demo server ${demo.guildId}: already has ${count(demo.members, 'member')}, left as it was`
}
