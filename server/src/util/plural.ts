/**
 * A count and its noun, singular for exactly one: `plural(1, 'file')` is "1 file",
 * `plural(3, 'file')` "3 files", `plural(2, 'match', 'matches')` "2 matches". Counts of a
 * thousand or more are grouped (1,234), as the usage report prints them.
 */
export function plural(count: number, noun: string, nouns = `${noun}s`): string {
  return `${count.toLocaleString('en-US')} ${count === 1 ? noun : nouns}`;
}
