/**
 * The concurrency rules across real processes: two API processes and two worker processes
 * (started exactly as `npm start` starts them) race on one Redis.
 *  - one key slot left: 20 concurrent creates spread over both APIs -> exactly one 201;
 *  - 50 concurrent updates of one linked record spread over both APIs -> exactly one 200;
 *  - the winner is published (over ARC, to the devnet node started here) and mined once;
 *    SIGKILLed workers lose no accepted write;
 *  - SIGTERM lets an in-flight request finish before the API process exits;
 *  - 50 concurrent writes over both APIs never share a funding UTXO, and every input of every
 *    transaction passes the sdk's interpreter against the output it spends.
 */
import http from 'node:http';
import type { ChildProcess } from 'node:child_process';
import { LockingScript, Spend, Transaction } from '@bsv/sdk';
import { devnetKeys } from '@proofline/devnet';
import { startArcDevnet } from '@proofline/devnet-testing';
import type { ArcDevnet } from '@proofline/devnet-testing';
import { generateRawKey } from '@proofline/identity-domain';
import { eventually, freePort, testRedis, testRedisEnv, uniquePrefix } from '@proofline/shared-testing';
import { RecordStore } from '@proofline/records-data-access';
import { SpawnedApps } from '../testing/spawned-apps';
import { newDeploymentPartitions } from '@proofline/shared-redis';

describe('races, crashes and shutdown across real processes', () => {
  const prefix = uniquePrefix('mp');
  const { redis, cleanup } = testRedis(prefix);
  // The API processes' records, read wherever their partition put them.
  const records = new RecordStore(redis, prefix, { partitions: newDeploymentPartitions(redis) });
  const bootstrap = generateRawKey();
  const bases: string[] = [];
  const apis: ChildProcess[] = [];

  // Two single-process APIs on their own ports race here (processes sharing one port have the
  // launcher's and the outage spec's kill tests): more would only add processes starting through
  // tsx. The spec funds the pool itself and checks every input against a parent it knows (its own
  // funding split or an earlier record), so the workers' wallet upkeep must not split coinbases
  // into the pool meanwhile (POOL_LOW_WATER=0): a UTXO of such a split was the cause of a CI
  // failure ("spends …, which the pool never held").
  let dev: ArcDevnet;
  const apps = new SpawnedApps(() => ({
    ...testRedisEnv(),
    REDIS_PREFIX: prefix,
    LOG_LEVEL: 'silent',
    BOOTSTRAP_API_KEY: bootstrap,
    KEY_LIMIT: '2',
    API_PROCESSES: '1',
    POOL_LOW_WATER: '0',
    POOL_TARGET: '1',
    ...dev.env,
  }));
  const start = (entry: string, env: Record<string, string>) => apps.start(entry, env);
  const workers: ChildProcess[] = [];
  /** outpoint -> satoshis of every UTXO the test put in the pool. */
  const funded = new Map<string, number>();
  /** The node's view: MINED in exactly one main-chain block, the same the record's status names. */
  const minedOnce = async (txId: string, blockHash: string) => {
    const arc = (await (await fetch(`${dev.node.url}/v1/tx/${txId}`)).json()) as {
      txStatus: string;
      blockHash: string;
    };
    expect(arc).toMatchObject({ txStatus: 'MINED', blockHash });
  };

  beforeAll(async () => {
    // The devnet node (ARC over HTTP, a block every 500 ms) in this process; the apps point at it.
    dev = await startArcDevnet({ redis, prefix, blockIntervalMs: 500 });
    // The API processes reserve every write's funding from the pool: real UTXOs of a coinbase split.
    // A thin pool (about five a shard over 64 partitions): a root whose partitions are empty
    // takes funding from any shard that has some, so no write here may meet FUNDING_EXHAUSTED.
    for (const u of await dev.fund(300, 1000)) funded.set(`${u.txId}:${u.vout}`, u.satoshis);
    for (let i = 0; i < 2; i += 1) {
      const port = await freePort();
      // One process per API (API_PROCESSES=1): the races are between two separate API processes.
      apis.push(start('apps/api/src/main.ts', { PORT: String(port), HOST: '127.0.0.1', API_PROCESSES: '1' }));
      bases.push(`http://127.0.0.1:${port}`);
    }
    workers.push(start('apps/worker/src/main.ts', {}), start('apps/worker/src/main.ts', {}));
    await apps.ready(bases);
  }, 90_000);

  afterAll(async () => {
    await apps.stop();
    await dev.close();
    await cleanup();
  }, 30_000);

  it('one key slot left: exactly one of 20 creates over two API processes wins', async () => {
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        fetch(`${bases[i % 2]}/api/v1/auth/identity-api-keys`, {
          method: 'POST',
          headers: { 'x-api-key': bootstrap, 'content-type': 'application/json' },
          body: JSON.stringify({ name: `racer-${i}`, issuerPermission: 'Issuer_User' }),
        }).then(async (r) => ({ status: r.status, body: (await r.json()) as { errorCode?: string } })),
      ),
    );
    expect(results.filter((r) => r.status === 201)).toHaveLength(1);
    const losers = results.filter((r) => r.status !== 201);
    expect(losers.every((r) => r.status === 403 && r.body.errorCode === 'identity_api_key_limit_exceeded')).toBe(true);
    const usage = (await (
      await fetch(`${bases[1]}/api/v1/auth/identity-api-keys/usage`, { headers: { 'x-api-key': bootstrap } })
    ).json()) as { used: number; limit: number };
    expect(usage).toEqual({ used: 2, limit: 2 });
  });

  it('exactly one of 50 concurrent updates of one record over two API processes wins, and it is mined once', async () => {
    const octet = { 'x-api-key': bootstrap, 'content-type': 'application/octet-stream' };
    const created = (await (
      await fetch(`${bases[0]}/api/v1/linkedrecords`, { method: 'POST', headers: octet, body: 'root' })
    ).json()) as { txId: string };
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        fetch(`${bases[i % 2]}/api/v1/linkedrecords/${created.txId}/update`, {
          method: 'POST',
          headers: octet,
          body: `v${i}`,
        }).then(async (r) => ({
          status: r.status,
          body: (await r.json()) as { txId?: string; errorCode?: string },
        })),
      ),
    );
    const winners = results.filter((r) => r.status === 200);
    expect(winners).toHaveLength(1);
    expect(results.filter((r) => r.status === 409 && r.body.errorCode === 'NOT_LINKED_RECORDS_END')).toHaveLength(49);

    const winner = winners[0]?.body.txId as string;
    const nav = (await (
      await fetch(`${bases[1]}/api/v1/linkedrecords/${created.txId}/navigate?links=10`, { headers: octet })
    ).json()) as { txIds: string[] };
    expect(nav.txIds).toEqual([winner]);
    const status = await eventually(
      async () => {
        const s = (await (
          await fetch(`${bases[0]}/api/v1/linkedrecords/${winner}/status`, { headers: octet })
        ).json()) as { confirmation: { blockHash: string } | null };
        return s.confirmation;
      },
      20_000,
      100,
    );
    // the winning transaction is mined, in the block its status names
    expect(status.blockHash).toMatch(/^[0-9a-f]{64}$/);
    await minedOnce(winner, status.blockHash);
  });

  it('50 concurrent writes over two API processes never share a funding UTXO; every input passes the interpreter', async () => {
    const octet = { 'x-api-key': bootstrap, 'content-type': 'application/octet-stream' };
    const results = await Promise.all(
      Array.from({ length: 50 }, async (_, i) => {
        const r = await fetch(`${bases[i % 2]}/api/v1/${i % 5 === 0 ? 'linkedrecords' : 'records'}`, {
          method: 'POST',
          headers: octet,
          body: `funded-${i}`,
        });
        expect(r.status).toBe(200);
        return ((await r.json()) as { txId: string }).txId;
      }),
    );
    const txs = await Promise.all(
      results.map(async (txId) => ({
        txId,
        tx: Transaction.fromBinary([...((await records.rawTxMany([txId]))[0] as Uint8Array)]),
      })),
    );
    const spentOutpoints = txs.flatMap(({ tx }) =>
      tx.inputs.map((input) => `${input.sourceTXID}:${input.sourceOutputIndex}`),
    );
    expect(spentOutpoints).toHaveLength(50);
    expect(new Set(spentOutpoints).size).toBe(50);
    for (const { txId, tx } of txs) {
      expect(tx.id('hex')).toBe(txId);
      const [input] = tx.inputs;
      const outpoint = `${input!.sourceTXID}:${input!.sourceOutputIndex}`;
      // A UTXO the pool was funded with, the change of an earlier record (once publication
      // confirms it), or an output of a split the workers' wallet upkeep made from a coinbase (the
      // node holds every transaction it accepted): check the signature against its funding
      // script and value.
      let satoshis = funded.get(outpoint);
      if (satoshis === undefined) {
        const parentId = input!.sourceTXID ?? '';
        const [recordRaw] = await records.rawTxMany([parentId]);
        const nodeHex = recordRaw ? null : await redis.hget(devnetKeys(prefix).raw, parentId);
        const parentRaw = recordRaw ?? (nodeHex ? Buffer.from(nodeHex, 'hex') : null);
        const parentOut = parentRaw
          ? Transaction.fromBinary([...parentRaw]).outputs[input!.sourceOutputIndex]
          : undefined;
        expect(parentOut?.lockingScript.toHex()).toBe(dev.funding.lockingScriptHex);
        satoshis = parentOut?.satoshis;
      }
      if (satoshis === undefined) throw new Error(`${txId} spends ${outpoint}, which the pool never held`);
      const spend = new Spend({
        sourceTXID: input!.sourceTXID!,
        sourceOutputIndex: input!.sourceOutputIndex,
        sourceSatoshis: satoshis,
        lockingScript: LockingScript.fromHex(dev.funding.lockingScriptHex),
        transactionVersion: tx.version,
        otherInputs: [],
        outputs: tx.outputs,
        inputIndex: 0,
        unlockingScript: input!.unlockingScript!,
        inputSequence: input!.sequence ?? 0xffffffff,
        lockTime: tx.lockTime,
      });
      expect(spend.validate()).toBe(true);
      // Change back to the funding script; the fee pays at least the floor rate.
      const change = tx.outputs[tx.outputs.length - 1]!;
      expect(change.lockingScript.toHex()).toBe(dev.funding.lockingScriptHex);
      const fee = satoshis - tx.outputs.reduce((n, o) => n + (o.satoshis ?? 0), 0);
      expect(fee).toBeGreaterThanOrEqual(Math.ceil(tx.toBinary().length / 1000));
    }
    // Every reservation was committed by its accept script: nothing is left leased.
    expect((await dev.pool.status()).leased.count).toBe(0);
  });

  it('accepted writes survive killed workers: SIGKILL both, write, start a new one, all are mined once', async () => {
    await Promise.all(
      workers.map(
        (w) =>
          new Promise<void>((resolve) => {
            w.once('exit', () => resolve());
            w.kill('SIGKILL');
          }),
      ),
    );
    const octet = { 'x-api-key': bootstrap, 'content-type': 'application/octet-stream' };
    const txIds = await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        const r = await fetch(`${bases[i % 2]}/api/v1/records?encode=SHA256`, {
          method: 'POST',
          headers: octet,
          body: `survivor-${i}`,
        });
        expect(r.status).toBe(200);
        return ((await r.json()) as { txId: string }).txId;
      }),
    );
    start('apps/worker/src/main.ts', {});
    const confirmations = await eventually(
      async () => {
        const statuses = await Promise.all(
          txIds.map(
            async (tx) =>
              (
                (await (await fetch(`${bases[0]}/api/v1/records/${tx}/status`, { headers: octet })).json()) as {
                  confirmation: { blockHash: string } | null;
                }
              ).confirmation,
          ),
        );
        return statuses.every((c) => c !== null) ? statuses : null;
      },
      30_000,
      200,
    );
    for (const [i, tx] of txIds.entries()) await minedOnce(tx, confirmations[i]?.blockHash ?? '');
  }, 60_000);

  it('SIGTERM lets an in-flight request finish, then the API process exits and refuses new connections', async () => {
    const api = apis[1] as ChildProcess;
    const url = new URL(`${bases[1]}/api/v1/records?encode=SHA256`);
    const body = Buffer.from('a record whose upload straddles the shutdown');
    const response = new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = http.request(
        url,
        {
          method: 'POST',
          agent: false,
          headers: {
            'x-api-key': bootstrap,
            'content-type': 'application/octet-stream',
            'content-length': body.length,
          },
        },
        (res) => {
          let text = '';
          res.on('data', (c: Buffer) => (text += c.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
        },
      );
      req.on('error', reject);
      req.write(body.subarray(0, 10));
      // the request is in flight (headers and part of the body sent): stop the process now
      setTimeout(() => {
        api.kill('SIGTERM');
        setTimeout(() => req.end(body.subarray(10)), 300);
      }, 200);
    });
    const exited = new Promise<number | null>((resolve) => api.once('exit', (code) => resolve(code)));
    const res = await response;
    expect(res.status).toBe(200);
    const { txId } = JSON.parse(res.text) as { txId: string };
    expect(await exited).toBe(0);
    await expect(fetch(`${bases[1]}/liveness`)).rejects.toThrow();
    // the write it accepted while stopping is durable and readable through the other instance
    const content = await fetch(`${bases[0]}/api/v1/records/${txId}/content`, { headers: { 'x-api-key': bootstrap } });
    expect(content.status).toBe(200);
  }, 30_000);
});
