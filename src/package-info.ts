// The package's own name, version and description, read once from package.json.
import { readFileSync } from 'node:fs'

export const packageInfo = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
  name: string
  version: string
  description: string
}
