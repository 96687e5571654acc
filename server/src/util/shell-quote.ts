/** One word for `bash -c`: single-quoted, so nothing in it is expanded. */
export function shellQuote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}
