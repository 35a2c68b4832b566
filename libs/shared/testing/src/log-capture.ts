import { Writable } from 'node:stream';

/** A pino destination that keeps every JSON line written to it, parsed (for log assertions). */
export function captureLogs(): { readonly sink: Writable; readonly lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString('utf8').split('\n'))
        if (line.length > 0) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { sink, lines };
}
