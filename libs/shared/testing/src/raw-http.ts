import net from 'node:net';

/** The first answer read from a raw socket (status line, lower-cased headers, body). */
export interface RawAnswer {
  readonly statusLine: string;
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
}

/**
 * Sends raw bytes on a new connection (for what a well-behaved client would not send: malformed
 * request lines, odd `Expect`, huge bodies) and resolves with the first complete answer: its
 * headers and body (by `Content-Length` or chunked), or what came before the server closed. Rejects on a
 * socket error (ECONNRESET, EPIPE) before a complete answer arrived: that is the failure these
 * tests look for. `body` may be sent after the head, in one write, while the answer is awaited.
 */
export function rawExchange(port: number, head: string, body?: Buffer): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let received = Buffer.alloc(0);
    let settled = false;
    const parse = (): (RawAnswer & { complete: boolean }) | undefined => {
      const text = received.toString('latin1');
      const end = text.indexOf('\r\n\r\n');
      if (end < 0) return undefined;
      const lines = text.slice(0, end).split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines.slice(1)) {
        const at = line.indexOf(':');
        if (at > 0) headers[line.slice(0, at).trim().toLowerCase()] = line.slice(at + 1).trim();
      }
      const rest = received.subarray(Buffer.byteLength(text.slice(0, end + 4), 'latin1'));
      const statusLine = lines[0] ?? '';
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1] ?? 0);
      if (status >= 100 && status < 200) {
        // An interim answer (100 Continue): the final one follows.
        received = rest;
        return parse();
      }
      if (headers['transfer-encoding'] === 'chunked') {
        const chunks: Buffer[] = [];
        let at = 0;
        for (;;) {
          const eol = rest.indexOf('\r\n', at);
          if (eol < 0) return undefined;
          const size = parseInt(rest.subarray(at, eol).toString('latin1'), 16);
          if (size === 0)
            return { statusLine, status, headers, body: Buffer.concat(chunks).toString('utf8'), complete: true };
          if (rest.length < eol + 2 + size + 2) return undefined;
          chunks.push(rest.subarray(eol + 2, eol + 2 + size));
          at = eol + 2 + size + 2;
        }
      }
      const length = headers['content-length'] === undefined ? undefined : Number(headers['content-length']);
      if (length !== undefined && rest.length < length) return undefined;
      const body = rest.subarray(0, length ?? rest.length).toString('utf8');
      return { statusLine, status, headers, body, complete: length !== undefined };
    };
    const settle = (fn: () => void) => {
      if (settled) return;
      settled = true;
      socket.destroy();
      fn();
    };
    socket.setTimeout(20_000, () => settle(() => reject(new Error('no answer within 20 s'))));
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      const answer = parse();
      if (answer?.complete) settle(() => resolve(answer));
    });
    socket.on('error', (err) => settle(() => reject(err)));
    socket.on('close', () => {
      const answer = parse();
      settle(() =>
        answer ? resolve(answer) : reject(new Error(`closed without an answer: ${received.length} bytes`)),
      );
    });
    socket.write(head);
    if (body) socket.write(body);
  });
}

/**
 * Asserts (jest) that a raw answer is a problem+json refusal: the status line, the content type, an
 * `x-request-id` (`requestId`, or any UUID), and `status` and `errorCode` in the body.
 */
export function expectProblemAnswer(answer: RawAnswer, status: number, errorCode: string, requestId?: string): void {
  expect(answer.statusLine).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
  expect(answer.headers['content-type']).toMatch(/^application\/problem\+json/);
  if (requestId === undefined) expect(answer.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  else expect(answer.headers['x-request-id']).toBe(requestId);
  expect(JSON.parse(answer.body)).toMatchObject({ status, errorCode });
}

/**
 * Asserts (jest) that what Node's HTTP server would answer with a bare status line or a dropped
 * connection is problem+json on `port`: an HTTP/1.1 request without `Host` (400 BAD_REQUEST), an
 * `Expect` other than `100-continue` (417 EXPECTATION_FAILED), `CONNECT` (405 METHOD_NOT_ALLOWED).
 */
export async function expectProtocolRefusals(port: number, path: string): Promise<void> {
  expectProblemAnswer(await rawExchange(port, `GET ${path} HTTP/1.1\r\n\r\n`), 400, 'BAD_REQUEST');
  const expectation = `POST ${path} HTTP/1.1\r\nHost: x\r\nExpect: 200-ok\r\nContent-Length: 0\r\n\r\n`;
  expectProblemAnswer(await rawExchange(port, expectation), 417, 'EXPECTATION_FAILED');
  const connect = 'CONNECT x:443 HTTP/1.1\r\nHost: x:443\r\n\r\n';
  expectProblemAnswer(await rawExchange(port, connect), 405, 'METHOD_NOT_ALLOWED');
}
