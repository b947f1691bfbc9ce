// `migrate`: brings the data under REDIS_PREFIX to this release's layout. The server does the
// same at start; the command is for doing it ahead of a deploy, with progress.
import type { Command } from 'commander'
import { migrate } from '../redis/migrate.js'
import { withRedis } from './connection.js'
import { print } from './output.js'

export function addMigrateCommand (program: Command): void {
  program.command('migrate')
    .description("move the data to this release's Redis layout (the server also does it at start); safe to run again")
    .action(async () => {
      await withRedis(async ({ redis, keys }) => {
        const result = await migrate(redis, keys, (guildId, members) => {
          if (process.stderr.isTTY) process.stderr.write(`  server ${guildId}: ${members} member records moved\n`)
        })
        print(result.from === result.to
          ? `the data under prefix ${keys.prefix} is already at schema ${result.to}`
          : `migrated prefix ${keys.prefix} from schema ${result.from} to ${result.to}: ${result.guilds} servers, ${result.members} member records moved`)
      })
    })
}
