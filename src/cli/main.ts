#!/usr/bin/env node
// The `leaderboard` command: the writer library, API keys, seeding, import and export from the shell.
// Success prints a few short lines on stdout; bad input, a refused operation or an unreachable
// Redis prints one `error: …` line on stderr and exits 1 (commander's usage errors too).
import { Command } from 'commander'
import { addFunctionsCommand } from './functions-command.js'
import { addKeyCommands } from './key-commands.js'
import { addMemberCommands } from './member-commands.js'
import { addMigrateCommand } from './migrate-command.js'
import { describeError, printError } from './output.js'
import { addSeedCommands } from './seed-commands.js'
import { addSeasonCommands } from './season-commands.js'
import { addTopCommand } from './top-command.js'
import { addTokenCommands } from './token-commands.js'
import { addTransferCommands } from './transfer-commands.js'

function buildProgram (): Command {
  const program = new Command('leaderboard')
    .description('Read and write the leaderboards behind the read-only API, and manage its keys.')
    .addHelpText('after', `
Environment:
  REDIS_URL      redis://[user:password@]host:port (default redis://127.0.0.1:6379);
                 with REDIS_CLUSTER=1, one or more seed URLs separated by commas
  REDIS_PREFIX   prefix of every key (default lb)
  REDIS_CLUSTER  true (or 1) to talk to a Redis Cluster; read as the server reads it`)
    .showSuggestionAfterError()
  addMemberCommands(program)
  addTopCommand(program)
  addSeasonCommands(program)
  addKeyCommands(program)
  addTokenCommands(program)
  addSeedCommands(program)
  addTransferCommands(program)
  addMigrateCommand(program)
  addFunctionsCommand(program)
  return program
}

try {
  await buildProgram().parseAsync(process.argv)
} catch (err) {
  printError(describeError(err))
  process.exitCode = 1
} finally {
  // Redis is disconnected by now, but a command that timed out during an outage can leave an
  // ioredis timer behind; the work is done, so do not wait for it. (Output to pipes and files
  // is written synchronously on Linux; nothing is lost.)
  setTimeout(() => { process.exit() }, 500).unref()
}
