/**
 * A count and its noun, singular for exactly one: `plural(1, 'file')` is "1 file",
 * `plural(3, 'file')` "3 files", `plural(2, 'match', 'matches')` "2 matches". Counts of a
 * thousand or more are grouped (1,234), as the usage report prints them.
 */
export function plural(count: number, noun: string, nouns = `${noun}s`): string {
  return `${groupDigits(count)} ${count === 1 ? noun : nouns}`;
}

/** 12,345: by hand, since the first toLocaleString of a process loads ICU (~20 ms in a hook). */
export function groupDigits(count: number): string {
  return String(count).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}
