// The harness every benchmark script shares: runs `main` with a list of clean-up steps and
// runs them (newest first) whatever happens, on Ctrl-C too, so no Redis is left behind.
export type Cleanups = Array<() => Promise<void>>

export async function runBenchmark (main: (cleanups: Cleanups) => Promise<void>): Promise<void> {
  const cleanups: Cleanups = []
  const cleanUp = async (): Promise<void> => {
    for (const step of cleanups.splice(0).reverse()) {
      try { await step() } catch (err) { console.error('cleanup failed:', err) }
    }
  }
  process.once('SIGINT', () => { cleanUp().finally(() => process.exit(130)).catch(() => {}) })
  try {
    await main(cleanups)
  } catch (err) {
    console.error(err)
    process.exitCode = 1
  } finally {
    await cleanUp()
  }
}
