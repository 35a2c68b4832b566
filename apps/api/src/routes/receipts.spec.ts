import { spawn } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { MerklePath } from '@bsv/sdk';
import { Transaction, Utils } from '@bsv/sdk';
import type { Receipt } from '@proofline/records-domain';
import { eventually } from '@proofline/shared-testing';
import { KEYS, startRecordsFixture } from '../testing/records-fixture';
import type { RecordsFixture } from '../testing/records-fixture';

const ROOT = path.resolve(__dirname, '../../../..');

/** The receipt a GET …/receipt answers (records-domain's schema, as the CLI parses a receipt file). */
type ReceiptJson = Receipt;

/** The CLI as a real process (the compiled sources through tsx, as `npm run cli` runs them). */
function cli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    // No REDIS_URL at all: `receipt verify` needs no service.
    const env = { PATH: process.env['PATH'] ?? '', HOME: os.tmpdir() };
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'apps/cli/src/main.ts'), ...args], {
      cwd: ROOT,
      env,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Flips one byte (hex pair) of `hex` at byte `at`. */
function flipByte(hex: string, at: number): string {
  const b = Buffer.from(hex, 'hex');
  b[at] = (b[at] as number) ^ 0x01;
  return b.toString('hex');
}

describe('receipts: GET …/{txId}/receipt and `receipt verify` offline', () => {
  let f: RecordsFixture;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pl-receipt-'));
  let receipt: ReceiptJson;
  let linkedCreate: string;
  let linkedUpdate: string;
  const content = Buffer.from('the minutes of the 2026 board meeting');
  const encode = 'SHA256(pepper)|Base64';

  beforeAll(async () => {
    f = await startRecordsFixture();
    f.startPublisher();
  });
  afterAll(async () => {
    await f.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  async function write(pathAndQuery: string, body: Buffer | undefined): Promise<string> {
    const res = await f.request('POST', pathAndQuery, body === undefined ? {} : { body });
    expect(res.status).toBe(200);
    return ((await res.json()) as { txId: string }).txId;
  }
  async function published(txId: string): Promise<void> {
    await eventually(async () => (await f.store.state(txId)) === 'published', 15_000);
  }

  it('409 RECEIPT_NOT_READY with Retry-After before confirmation, then 200 with the receipt', async () => {
    const txId = await write(`/api/v1/records?encode=${encodeURIComponent(encode)}`, content);
    const early = await f.request('GET', `/api/v1/records/${txId}/receipt`, { key: KEYS.auditorA });
    expect(early.status).toBe(409);
    expect(early.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(early.headers.get('retry-after')).toBe('5');
    expect(await early.json()).toMatchObject({ status: 409, errorCode: 'RECEIPT_NOT_READY' });

    linkedCreate = await write('/api/v1/linkedrecords?encode=SHA256', Buffer.from('v1'));
    await Promise.all([published(txId), published(linkedCreate)]);
    // Published but not mined: still not ready.
    expect((await f.request('GET', `/api/v1/records/${txId}/receipt`)).status).toBe(409);
    linkedUpdate = await write(`/api/v1/linkedrecords/${linkedCreate}/update?encode=SHA256`, Buffer.from('v2'));
    await f.produceBlock();
    await published(linkedUpdate);
    const block = await f.produceBlock();

    const res = await f.request('GET', `/api/v1/records/${txId}/receipt`, { key: KEYS.auditorA });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    receipt = (await res.json()) as ReceiptJson;
    const status = (await (await f.request('GET', `/api/v1/records/${txId}/status`)).json()) as {
      confirmation: { blockHash: string; merkleProof: unknown };
    };
    const stored = await f.store.publication(txId);
    expect(receipt).toEqual({
      version: 1,
      txId,
      family: 'records',
      rawTx: stored && Buffer.from(stored.rawTx).toString('hex'),
      encoding: ['SHA256', 'Base64'],
      contentType: 'text/plain; event-encoded=SHA256|Base64',
      merkleProof: status.confirmation.merkleProof,
      blockHeader: receipt.merkleProof.target,
      blockHash: status.confirmation.blockHash,
      blockHeight: expect.any(Number),
      beef: expect.stringMatching(/^01010101/),
    });
    // Salts never appear in a receipt.
    expect(JSON.stringify(receipt)).not.toContain('pepper');
    expect(receipt.blockHash).not.toBe(block.hash); // mined in the block before the update's
    expect(receipt.blockHeight).toBe(block.height - 1);

    // The BEEF round-trips through @bsv/sdk: the same transaction, a Merkle path to the header's root.
    const beef = Utils.toArray(receipt.beef, 'hex');
    const tx = Transaction.fromAtomicBEEF(beef);
    expect(tx.id('hex')).toBe(txId);
    expect(tx.toHex()).toBe(receipt.rawTx);
    const merklePath = tx.merklePath as MerklePath;
    expect(merklePath.blockHeight).toBe(receipt.blockHeight);
    const headerRoot = Buffer.from(receipt.blockHeader, 'hex').subarray(36, 68).reverse().toString('hex');
    expect(merklePath.computeRoot(txId)).toBe(headerRoot);
    expect(Utils.toHex(tx.toAtomicBEEF())).toBe(receipt.beef);
    expect(Transaction.fromBEEF(beef).id('hex')).toBe(txId);
  });

  it('linked receipts carry prevTxId (null for a create); the other family, bad and unknown txIds are refused', async () => {
    const create = (await (
      await f.request('GET', `/api/v1/linkedrecords/${linkedCreate}/receipt`)
    ).json()) as ReceiptJson;
    expect(create).toMatchObject({ family: 'linkedrecords', txId: linkedCreate, prevTxId: null, encoding: ['SHA256'] });
    const update = (await (
      await f.request('GET', `/api/v1/linkedrecords/${linkedUpdate}/receipt`, { key: KEYS.writerB })
    ).json()) as ReceiptJson;
    expect(update).toMatchObject({ family: 'linkedrecords', txId: linkedUpdate, prevTxId: linkedCreate });
    expect(Transaction.fromAtomicBEEF(Utils.toArray(update.beef, 'hex')).id('hex')).toBe(linkedUpdate);

    const other = await f.request('GET', `/api/v1/records/${linkedCreate}/receipt`);
    expect(other.status).toBe(400);
    expect(await other.json()).toMatchObject({ errorCode: 'TX_INCORRECT_EVENT_TRANSACTION_TYPE' });
    const other2 = await f.request('GET', `/api/v1/linkedrecords/${receipt.txId}/receipt`);
    expect(await other2.json()).toMatchObject({ status: 400, errorCode: 'TX_INCORRECT_EVENT_TRANSACTION_TYPE' });
    const bad = await f.request('GET', '/api/v1/records/xyz/receipt');
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ errorCode: 'TX_ID_PARAM_INVALID' });
    const unknown = await f.request('GET', `/api/v1/records/${'ab'.repeat(32)}/receipt`);
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ errorCode: 'TX_NOT_FOUND' });
    const anonymous = await f.request('GET', `/api/v1/records/${receipt.txId}/receipt`, { key: null });
    expect(anonymous.status).toBe(401);
  });

  it('the CLI, as a process with no service, accepts the real receipt and names the check a changed byte breaks', async () => {
    const save = (name: string, r: unknown) => {
      const p = path.join(dir, name);
      fs.writeFileSync(p, typeof r === 'string' ? r : JSON.stringify(r));
      return p;
    };
    const contentFile = save('content.txt', content.toString());
    const good = save('good.json', receipt);

    // A WhatsOnChain-compatible headers service on loopback: it knows the block at `height`.
    const h = Buffer.from(receipt.blockHeader, 'hex');
    const rev = (b: Buffer) => Buffer.from(b).reverse().toString('hex');
    const headersServer = (height: number) => {
      const server = http.createServer((req, res) => {
        if (req.url !== `/block/${receipt.blockHash}/header`) {
          res.statusCode = 404;
          res.end();
          return;
        }
        res.setHeader('content-type', 'application/json');
        res.end(
          JSON.stringify({
            hash: receipt.blockHash,
            height,
            confirmations: 2,
            version: h.readInt32LE(0),
            previousblockhash: rev(h.subarray(4, 36)),
            merkleroot: rev(h.subarray(36, 68)),
            time: h.readUInt32LE(68),
            bits: h.readUInt32LE(72).toString(16).padStart(8, '0'),
            nonce: h.readUInt32LE(76),
          }),
        );
      });
      return new Promise<http.Server>((r) => server.listen(0, '127.0.0.1', () => r(server)));
    };
    const [rightServer, wrongServer] = await Promise.all([
      headersServer(receipt.blockHeight),
      headersServer(receipt.blockHeight + 7),
    ]);
    const urlOf = (sv: http.Server) => `http://127.0.0.1:${(sv.address() as AddressInfo).port}`;
    const [ok, missing, known, elsewhere] = await Promise.all([
      cli(['receipt', 'verify', good, '--content', contentFile, '--encode', encode]),
      cli(['receipt', 'verify', path.join(dir, 'missing.json')]),
      cli(['receipt', 'verify', good, '--headers-url', urlOf(rightServer)]),
      cli(['receipt', 'verify', good, '--headers-url', urlOf(wrongServer)]),
    ]);
    rightServer.close();
    wrongServer.close();
    expect(missing.code).toBe(2);
    expect({ code: known.code, out: known.stdout }).toEqual({
      code: 0,
      out: expect.stringContaining('headers service verified'),
    });
    expect({ code: elsewhere.code, err: elsewhere.stderr }).toEqual({
      code: 1,
      err: expect.stringContaining('FAILED HEADERS_SOURCE:'),
    });
    expect(ok.stderr).toContain('does not prove that its block is on the longest chain');
    expect(ok.code).toBe(0);
    expect(ok.stdout.trim().split('\n')).toHaveLength(1);
    expect(ok.stdout).toContain(`OK records ${receipt.txId} in block ${receipt.blockHash}`);
    expect(ok.stdout).toContain('content');

    // One changed byte in each part of the receipt.
    const rawTxLen = receipt.rawTx.length / 2;
    const cases: [string, ReceiptJson | string, string[], string][] = [
      ['tx', { ...receipt, rawTx: flipByte(receipt.rawTx, rawTxLen - 5) }, [], 'TX_ID'],
      [
        'proof node',
        {
          ...receipt,
          merkleProof: {
            ...receipt.merkleProof,
            nodes: receipt.merkleProof.nodes.map((n, i) => (i === 0 && n !== '*' ? flipByte(n, 3) : n)),
          },
        },
        [],
        'MERKLE_PROOF',
      ],
      [
        'header',
        {
          ...receipt,
          blockHeader: flipByte(receipt.blockHeader, 40),
          merkleProof: { ...receipt.merkleProof, target: flipByte(receipt.blockHeader, 40) },
        },
        [],
        'BLOCK_HASH',
      ],
      ['beef', { ...receipt, beef: flipByte(receipt.beef, receipt.beef.length / 2 - 3) }, [], 'BEEF'],
      [
        'content',
        receipt,
        ['--content', save('other.txt', 'the minutes of the 2026 board meetinG'), '--encode', encode],
        'CONTENT',
      ],
      ['salt', receipt, ['--content', contentFile, '--encode', 'SHA256(peppeR)|Base64'], 'CONTENT'],
    ];
    expect(receipt.merkleProof.nodes[0]).not.toBe('*');
    // The processes run side by side (each one loads tsx: seconds on a loaded machine).
    const refused = await Promise.all(
      cases.map(async ([name, changed, extra]) => ({
        name,
        out: await cli(['receipt', 'verify', save(`${name}.json`, changed), ...extra]),
      })),
    );
    refused.forEach(({ name, out }, i) => {
      expect({ name, code: out.code, first: out.stderr.split('\n')[0] }).toEqual({
        name,
        code: 1,
        first: expect.stringContaining(`FAILED ${cases[i]?.[3]}:`),
      });
    });

    const garbage = ['not json at all', '{"version":1}', JSON.stringify({ ...receipt, blockHeader: 'zz' })];
    const malformed = await Promise.all(
      garbage.map((g, i) => cli(['receipt', 'verify', save(`garbage-${i}.json`, g)])),
    );
    for (const out of malformed) {
      expect(out.code).toBe(2);
      expect(out.stderr).toContain('malformed receipt');
    }
  }, 120_000);
});
