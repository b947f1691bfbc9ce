// Plausible, distinct display names for a seeded crowd, in the styles Discord users pick.
import type { Random } from '../random.js'

const ADJECTIVES = [
  'quiet', 'sleepy', 'lucky', 'salty', 'cosmic', 'fuzzy', 'silent', 'rusty', 'neon', 'frozen',
  'golden', 'sneaky', 'wild', 'lazy', 'brave', 'tiny', 'dark', 'crispy', 'mighty', 'shy',
  'electric', 'spicy', 'hollow', 'crimson', 'pixel', 'velvet', 'grumpy', 'swift', 'lost', 'happy',
  'ancient', 'feral', 'stormy', 'sunny', 'glitchy', 'toasty', 'mellow', 'wobbly', 'noble', 'odd'
]
const NOUNS = [
  'otter', 'fox', 'panda', 'wolf', 'raven', 'goblin', 'waffle', 'noodle', 'comet', 'badger',
  'dragon', 'pickle', 'falcon', 'lynx', 'moth', 'ghost', 'knight', 'potato', 'wizard', 'cactus',
  'tiger', 'muffin', 'penguin', 'phoenix', 'toast', 'sloth', 'viking', 'kraken', 'bean', 'hamster',
  'ninja', 'pirate', 'robot', 'llama', 'spark', 'koala', 'turnip', 'yeti', 'mango', 'owl'
]
const FIRST_NAMES = [
  'emma', 'lukas', 'mia', 'noah', 'sofia', 'liam', 'lena', 'mateo', 'chloe', 'kai', 'yuki', 'omar',
  'ava', 'jonas', 'nina', 'leo', 'hana', 'felix', 'zoe', 'arjun', 'sara', 'theo', 'ines', 'ravi',
  'maja', 'ethan', 'lucia', 'finn', 'amir', 'elif', 'jack', 'aiko', 'tom', 'nora', 'diego', 'ida'
]
const FLAIR = ['✨', '🌙', '🔥', '🎮', '🍀', '⚡']

const SPECIAL = ['Zoë', 'Björn', 'Chloé', 'Søren', 'Łukasz', 'José', 'Naïa', 'Renée']

const capital = (word: string): string => word.charAt(0).toUpperCase() + word.slice(1)

// A username is drawn as a number, its code, and spelled once it is known to be free, so that
// repeats in a crowd of a million are counted in an array instead of a Map of strings. Each style
// has a range of codes holding only the parts it shows: equal names have equal codes.
const PAIRS = ADJECTIVES.length * NOUNS.length
const STYLE_SIZES = [
  PAIRS, //                             0 quietotter
  PAIRS * 99, //                        1 quiet_otter42         (1 to 99)
  FIRST_NAMES.length * 2011, //         2 emma1999 or emma42    (1 to 2011)
  FIRST_NAMES.length * NOUNS.length, // 3 emma.otter
  PAIRS, //                             4 QuietOtter
  PAIRS, //                             5 Quiet Otter
  NOUNS.length * 9900, //               6 otter_1234            (100 to 9999)
  FIRST_NAMES.length * FLAIR.length, // 7 Emma ✨
  PAIRS, //                             8 xX_quietotter_Xx
  SPECIAL.length //                     9 Zoë
]
const STYLE_START = STYLE_SIZES.map((_, i) => STYLE_SIZES.slice(0, i).reduce((a, b) => a + b, 0))
export const USERNAME_CODES = STYLE_START.at(-1) as number + (STYLE_SIZES.at(-1) as number)

function usernameCode (rng: Random): number {
  const adjective = rng.index(ADJECTIVES.length)
  const noun = rng.index(NOUNS.length)
  const first = rng.index(FIRST_NAMES.length)
  const pair = adjective * NOUNS.length + noun
  const roll = rng.next()
  if (roll < 0.22) return codeOf(0, pair)
  if (roll < 0.40) return codeOf(1, pair * 99 + rng.int(1, 99) - 1)
  if (roll < 0.55) return codeOf(2, first * 2011 + (rng.chance(0.5) ? rng.int(1985, 2011) : rng.int(1, 999)) - 1)
  if (roll < 0.65) return codeOf(3, first * NOUNS.length + noun)
  if (roll < 0.75) return codeOf(4, pair)
  if (roll < 0.83) return codeOf(5, pair)
  if (roll < 0.90) return codeOf(6, noun * 9900 + rng.int(100, 9999) - 100)
  if (roll < 0.95) return codeOf(7, first * FLAIR.length + rng.index(FLAIR.length))
  if (roll < 0.98) return codeOf(8, pair)
  // Display names are not only ASCII.
  return codeOf(9, rng.index(SPECIAL.length))
}

function codeOf (style: number, index: number): number {
  return (STYLE_START[style] as number) + index
}

function spellUsername (code: number): string {
  let style = STYLE_START.length - 1
  while ((STYLE_START[style] as number) > code) style--
  const index = code - (STYLE_START[style] as number)
  const adjective = ADJECTIVES[Math.floor(index / NOUNS.length) % ADJECTIVES.length] as string
  const noun = NOUNS[index % NOUNS.length] as string
  switch (style) {
    case 0: return adjective + noun
    case 1: {
      const pair = Math.floor(index / 99)
      return `${ADJECTIVES[Math.floor(pair / NOUNS.length)] as string}_${NOUNS[pair % NOUNS.length] as string}${index % 99 + 1}`
    }
    case 2: return `${FIRST_NAMES[Math.floor(index / 2011)] as string}${index % 2011 + 1}`
    case 3: return `${FIRST_NAMES[Math.floor(index / NOUNS.length)] as string}.${noun}`
    case 4: return capital(adjective) + capital(noun)
    case 5: return `${capital(adjective)} ${capital(noun)}`
    case 6: return `${NOUNS[Math.floor(index / 9900)] as string}_${index % 9900 + 100}`
    case 7: return `${capital(FIRST_NAMES[Math.floor(index / FLAIR.length)] as string)} ${FLAIR[index % FLAIR.length] as string}`
    case 8: return `xX_${adjective}${noun}_Xx`
    default: return SPECIAL[index] as string
  }
}

/**
 * Display names need not be unique, but a crowd of clones would not look real. A name still
 * taken after three draws gets a number, as Discord users pick one: "<name>_<n>", n the next
 * after the last one given to that name (`taken[code]` counts its holders). No base name is
 * "<another base name>_<n>", so the numbered names are new too: every name is distinct.
 */
export function uniqueUsername (rng: Random, taken: Uint32Array): string {
  let code = usernameCode(rng)
  for (let attempt = 0; (taken[code] as number) > 0 && attempt < 3; attempt++) code = usernameCode(rng)
  const holders = taken[code] as number
  taken[code] = holders + 1
  return holders === 0 ? spellUsername(code) : `${spellUsername(code)}_${holders}`
}
