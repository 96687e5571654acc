/** Collects a command's output keeping only its head and tail, so memory stays bounded. */
export interface OutputCapture {
  push(chunk: Buffer): void;
  /** The output, with a `[… N bytes cut …]` line where the middle was dropped. */
  text(): string;
}

export function createOutputCapture(maxBytes: number): OutputCapture {
  const headLimit = Math.floor(maxBytes / 2);
  const tailLimit = maxBytes - headLimit;
  const head: Buffer[] = [];
  const tail: Buffer[] = [];
  let headBytes = 0;
  let tailBytes = 0;
  let totalBytes = 0;
  return {
    push(chunk) {
      totalBytes += chunk.length;
      const toHead = chunk.subarray(0, Math.max(0, headLimit - headBytes));
      head.push(toHead);
      headBytes += toHead.length;
      const rest = chunk.subarray(toHead.length);
      if (rest.length === 0) return;
      tail.push(rest);
      tailBytes += rest.length;
      while (tailBytes > tailLimit) {
        const first = tail[0];
        if (!first) break;
        const excess = tailBytes - tailLimit;
        if (first.length <= excess) tail.shift();
        else tail[0] = first.subarray(excess);
        tailBytes -= Math.min(first.length, excess);
      }
    },
    text() {
      const cutBytes = totalBytes - headBytes - tailBytes;
      if (cutBytes === 0) return Buffer.concat([...head, ...tail]).toString('utf8');
      const headText = Buffer.concat(head).toString('utf8');
      const tailText = Buffer.concat(tail).toString('utf8');
      return `${headText}\n[… ${cutBytes} bytes cut …]\n${tailText}`;
    },
  };
}
