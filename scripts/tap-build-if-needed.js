// `npm test`'s pretest, after the build: tap's test class is generated code with its plugins
// built in, and npm installs it built with tap's defaults, TypeScript through ts-node among them;
// .taprc drops that plugin for tsx. tap sees the difference and rebuilds at the start of a run, but
// the test files of that very run still get the loaders it started with, ts-node's (7.3 s a test
// process against tsx's 2.0). So the class is rebuilt here, before the run, when its plugins are
// not .taprc's: once after an install, and in 0.2 s of checking otherwise.
import { spawnSync } from 'node:child_process'
import { TapConfig } from '@tapjs/config'
import { signature } from '@tapjs/test'

const config = await TapConfig.load()
if (config.pluginSignature !== signature) {
  console.log("rebuilding tap's test class for .taprc's plugins (once after an install)")
  const build = spawnSync('npx', ['tap', 'build'], { stdio: 'inherit', shell: process.platform === 'win32' })
  if (build.status !== 0) process.exit(build.status ?? 1)
}
