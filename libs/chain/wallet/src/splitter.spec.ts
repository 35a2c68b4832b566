/**
 * The splitter against real Redis with an in-spec SplitBuilder that builds and signs real
 * @bsv/sdk transactions (until bsv-builder's `buildSplitTransaction` lands) and an in-spec
 * ARC stand-in that validates what it is sent: it parses the EF, runs the sdk's script
 * interpreter on every input against the output it spends, checks its own UTXO ledger (unknown
 * or spent inputs are refused) and the fee policy. Neither answers success without checking.
 */
import { createHash, randomBytes } from 'node:crypto';
import { LockingScript, Spend, Transaction, TransactionSignature, UnlockingScript } from '@bsv/sdk';
import { deriveChainKeys } from '@proofline/chain-bsv';
import type { BroadcastVerdict, RefusalCode } from '@proofline/chain-domain';
import { DEVNET_WALLET_SEED, ManualClock } from '@proofline/shared-config';
import { testRedis, testRedisClient, uniquePrefix } from '@proofline/shared-testing';
import { fundingIdentity } from './funding-address';
import { FundingPool } from './funding-pool';
import { toOutpoint } from './funding-pool';
import { CoinbaseScanner } from './coinbase-scan';
import type { BuiltSplit, CoinbaseSource, FundingUtxo, SplitBuilder, SplitRequest, SubmitPort } from './ports';
import { Splitter } from './splitter';
import { rebalance, reservoir, walletUpkeep } from './wallet-upkeep';

const keys = deriveChainKeys(DEVNET_WALLET_SEED);
const identity = fundingIdentity(keys, 'devnet');
const fundingScript = () => LockingScript.fromHex(identity.lockingScriptHex);
const SIGHASH = TransactionSignature.SIGHASH_ALL | TransactionSignature.SIGHASH_FORKID;

class InsufficientFundingError extends Error {
  override readonly name = 'InsufficientFundingError';
}

/** Builds and signs a real split transaction with the sdk (P2PKH in, `count` × P2PKH + change out). */
class SdkSplitBuilder implements SplitBuilder {
  constructor(
    private readonly satoshisPerKilobyte: number,
    private readonly signer = keys.funding,
  ) {}

  buildSplitTransaction({ inputs, count, satoshisEach }: SplitRequest): BuiltSplit {
    const tx = new Transaction();
    for (const u of inputs) {
      const source = new Transaction();
      source.outputs[u.vout] = { satoshis: u.satoshis, lockingScript: fundingScript() };
      tx.addInput({
        sourceTXID: u.txId,
        sourceOutputIndex: u.vout,
        sourceTransaction: source,
        sequence: 0xffffffff,
        unlockingScript: new UnlockingScript(),
      });
    }
    for (let i = 0; i < count; i++) tx.addOutput({ satoshis: satoshisEach, lockingScript: fundingScript() });
    const total = inputs.reduce((s, u) => s + u.satoshis, 0);
    const size = 10 + 2 * 9 + inputs.length * 148 + (count + 1) * 34;
    const fee = Math.ceil((size * this.satoshisPerKilobyte) / 1000);
    const change = total - count * satoshisEach - fee;
    if (change < 0) throw new InsufficientFundingError(`need ${count * satoshisEach + fee}, have ${total}`);
    if (change > 0) tx.addOutput({ satoshis: change, lockingScript: fundingScript() });
    tx.inputs.forEach((input, inputIndex) => {
      const u = inputs[inputIndex] as FundingUtxo;
      const preimage = TransactionSignature.formatBytes({
        sourceTXID: u.txId,
        sourceOutputIndex: u.vout,
        sourceSatoshis: u.satoshis,
        transactionVersion: tx.version,
        otherInputs: tx.inputs.filter((_, j) => j !== inputIndex),
        outputs: tx.outputs,
        inputIndex,
        subscript: fundingScript(),
        inputSequence: 0xffffffff,
        lockTime: tx.lockTime,
        scope: SIGHASH,
      });
      const raw = this.signer.privateKey.sign(Array.from(sha256(preimage)));
      const sig = new TransactionSignature(raw.r, raw.s, SIGHASH).toChecksigFormat();
      const pub = this.signer.publicKey;
      input.unlockingScript = new UnlockingScript([
        { op: sig.length, data: sig },
        { op: pub.length, data: [...pub] },
      ]);
    });
    const txId = tx.id('hex');
    const outputs = Array.from({ length: count }, (_, vout) => ({ txId, vout, satoshis: satoshisEach }));
    return {
      txId,
      rawHex: tx.toHex(),
      efHex: tx.toHexEF(),
      outputs,
      change: change > 0 ? { txId, vout: count, satoshis: change } : null,
      fee,
    };
  }
}

function sha256(bytes: number[] | Uint8Array): Buffer {
  return createHash('sha256').update(Uint8Array.from(bytes)).digest();
}

const accepted = (txId: string): BroadcastVerdict => ({
  kind: 'accepted',
  txId,
  status: 'SEEN_ON_NETWORK',
  mined: null,
});
const refused = (txId: string, code: RefusalCode, reason: string): BroadcastVerdict => ({
  kind: 'refused',
  txId,
  code,
  reason,
  final: code !== 'DOUBLE_SPEND_ATTEMPTED',
  competingTxs: [],
});

/** A validating stand-in for ARC's POST /v1/tx over a UTXO ledger. */
class LedgerArc {
  readonly ledger = new Map<string, { satoshis: number; scriptHex: string; spentBy?: string }>();
  readonly accepted: string[] = [];
  down = false;
  minSatsPerKb = 0;
  /** Answer STORED (below SEEN_ON_NETWORK) to new transactions, as a slow ARC does. */
  holdBelowSeen = false;

  fund(u: FundingUtxo, scriptHex = identity.lockingScriptHex): void {
    this.ledger.set(toOutpoint(u), { satoshis: u.satoshis, scriptHex });
  }

  readonly submit: SubmitPort = async ({ txId, rawHex, efHex }): Promise<BroadcastVerdict> => {
    if (this.down) throw new Error('connect ECONNREFUSED 127.0.0.1:9090');
    const tx = Transaction.fromHexEF(efHex);
    if (tx.id('hex') !== txId || tx.toHex() !== rawHex) return refused(txId, 463, 'malformed');
    if (this.accepted.includes(txId)) return accepted(txId);
    if (this.holdBelowSeen) return { kind: 'pending', txId, status: 'STORED', detail: '' };
    let totalIn = 0;
    for (const [inputIndex, input] of tx.inputs.entries()) {
      const op = `${input.sourceTXID}:${input.sourceOutputIndex}`;
      const prev = this.ledger.get(op);
      if (!prev) return refused(txId, 462, `unknown input ${op}`);
      if (prev.spentBy) return refused(txId, 'DOUBLE_SPEND_ATTEMPTED', `spent by ${prev.spentBy}`);
      const source = input.sourceTransaction?.outputs[input.sourceOutputIndex];
      if (source?.satoshis !== prev.satoshis || source.lockingScript.toHex() !== prev.scriptHex)
        return refused(txId, 461, 'EF source mismatch');
      const spend = new Spend({
        sourceTXID: input.sourceTXID as string,
        sourceOutputIndex: input.sourceOutputIndex,
        sourceSatoshis: prev.satoshis,
        lockingScript: LockingScript.fromHex(prev.scriptHex),
        transactionVersion: tx.version,
        otherInputs: tx.inputs.filter((_, j) => j !== inputIndex),
        outputs: tx.outputs,
        inputIndex,
        unlockingScript: input.unlockingScript as UnlockingScript,
        inputSequence: input.sequence ?? 0xffffffff,
        lockTime: tx.lockTime,
      });
      let valid: boolean;
      try {
        valid = spend.validate(); // throws on a failing script
      } catch {
        valid = false;
      }
      if (!valid) return refused(txId, 461, 'script failed');
      totalIn += prev.satoshis;
    }
    const totalOut = tx.outputs.reduce((s, o) => s + (o.satoshis ?? 0), 0);
    if (totalIn - totalOut < Math.ceil(((rawHex.length / 2) * this.minSatsPerKb) / 1000))
      return refused(txId, 465, 'fee too low');
    for (const input of tx.inputs)
      (this.ledger.get(`${input.sourceTXID}:${input.sourceOutputIndex}`) as { spentBy?: string }).spentBy = txId;
    tx.outputs.forEach((o, vout) =>
      this.ledger.set(`${txId}:${vout}`, { satoshis: o.satoshis ?? 0, scriptHex: o.lockingScript.toHex() }),
    );
    this.accepted.push(txId);
    return accepted(txId);
  };
}

describe('Splitter (real Redis, real sdk transactions)', () => {
  const prefix = uniquePrefix('split');
  const { redis, cleanup } = testRedis(prefix);
  let n = 0;
  afterAll(cleanup);

  const setup = (options: { rate?: number; partitions?: number } = {}) => {
    const clock = new ManualClock('2026-11-01T00:00:00Z');
    const poolPrefix = `${prefix}:${++n}`;
    const pool = new FundingPool(redis, {
      prefix: poolPrefix,
      address: identity.address,
      clock,
      partitions: options.partitions ?? 1,
    });
    const arc = new LedgerArc();
    const splitter = new Splitter({
      pool,
      builder: new SdkSplitBuilder(options.rate ?? 1),
      submit: arc.submit,
      satoshisPerKilobyte: options.rate ?? 1,
      now: () => clock.now().getTime(),
    });
    const big = (satoshis: number): FundingUtxo => ({ txId: randomBytes(32).toString('hex'), vout: 0, satoshis });
    return { clock, pool, arc, splitter, big, poolPrefix };
  };

  it('splits a large UTXO into the target number of denomination UTXOs, which ARC accepts and the pool frees', async () => {
    const { pool, arc, splitter, big } = setup();
    const coin = big(5_000_000_000);
    arc.fund(coin);
    await pool.add([coin]);
    const report = await splitter.ensureLowWater({ lowWater: 20, target: 50, satoshisEach: 1000 });
    expect(report).toMatchObject({ status: 'split', outputs: 50, outcome: 'accepted' });
    if (report.status !== 'split') throw new Error('expected a split');
    expect(arc.accepted).toEqual([report.txId]);
    // 50 denomination UTXOs (the target) + the large change, the reservoir of the next split.
    expect(await pool.denominatedCount(1000)).toBe(50);
    const status = await pool.status();
    expect(status).toMatchObject({
      free: { count: 51 },
      pending: { count: 0 },
      spentUnconfirmed: { count: 0 },
      unsettledTransactions: 0,
    });
    expect(status.balance).toBe(5_000_000_000 - report.fee);
    // What the pool holds is exactly what the ledger says is unspent and ours.
    const free = await redis.zrange(pool.keys.free, 0, -1);
    for (const op of free) expect(arc.ledger.get(op)).toMatchObject({ scriptHex: identity.lockingScriptHex });
    expect(arc.ledger.get(toOutpoint(coin))?.spentBy).toBe(report.txId);

    expect(await splitter.ensureLowWater({ lowWater: 20, target: 50, satoshisEach: 1000 })).toEqual({
      status: 'sufficient',
      usable: 50,
    });
  });

  it('several workers at once: one splits, the others are busy or find enough', async () => {
    const { pool, arc, big } = setup();
    const coin = big(1_000_000);
    arc.fund(coin);
    await pool.add([coin]);
    const conns = Array.from({ length: 3 }, () => testRedisClient());
    try {
      const splitters = conns.map(
        (c) =>
          new Splitter({
            pool: new FundingPool(c, {
              prefix: pool.keys.free.replace(/:\{rec\}:wallet:free$/, ''),
              address: identity.address,
            }),
            builder: new SdkSplitBuilder(1),
            submit: arc.submit,
            satoshisPerKilobyte: 1,
          }),
      );
      const reports = await Promise.all(
        splitters.map((s) => s.ensureLowWater({ lowWater: 10, target: 30, satoshisEach: 1000 })),
      );
      expect(reports.filter((r) => r.status === 'split')).toHaveLength(1);
      expect(reports.every((r) => ['split', 'busy', 'sufficient'].includes(r.status))).toBe(true);
      expect(arc.accepted).toHaveLength(1);
      expect(await pool.denominatedCount(1000)).toBe(30);
    } finally {
      await Promise.all(conns.map((c) => c.quit()));
    }
  });

  it('ARC unreachable: the split stays committed (inputs spent, outputs pending), counts against low water, and its same bytes are re-submitted later', async () => {
    const { clock, pool, arc, splitter, big } = setup();
    const coin = big(100_000);
    arc.fund(coin);
    await pool.add([coin]);
    arc.down = true;
    const report = await splitter.ensureLowWater({ lowWater: 5, target: 10, satoshisEach: 1000 });
    expect(report).toMatchObject({ status: 'unreachable', error: expect.stringMatching(/ECONNREFUSED/) });
    if (report.status !== 'unreachable') throw new Error('expected unreachable');
    expect(await pool.status()).toMatchObject({
      free: { count: 0 },
      pending: { count: 11 },
      spentUnconfirmed: { count: 1, satoshis: 100_000 },
      unsettledTransactions: 1,
    });
    // Before resubmitAfterMs: pending split outputs count, no second split is built on top.
    expect(await splitter.ensureLowWater({ lowWater: 5, target: 10, satoshisEach: 1000 })).toEqual({
      status: 'sufficient',
      usable: 10,
    });
    arc.down = false;
    clock.advance(60_000);
    expect(await splitter.ensureLowWater({ lowWater: 5, target: 10, satoshisEach: 1000 })).toEqual({
      status: 'sufficient',
      usable: 10,
    });
    expect(arc.accepted).toEqual([report.txId]);
    expect(await pool.status()).toMatchObject({
      free: { count: 11 },
      pending: { count: 0 },
      spentUnconfirmed: { count: 0 },
      unsettledTransactions: 0,
    });
  });

  it('ARC holds the split below SEEN_ON_NETWORK: outputs stay pending until a later run sees it accepted', async () => {
    const { clock, pool, arc, splitter, big } = setup();
    const coin = big(100_000);
    arc.fund(coin);
    await pool.add([coin]);
    arc.holdBelowSeen = true;
    const report = await splitter.ensureLowWater({ lowWater: 5, target: 10, satoshisEach: 1000 });
    expect(report).toMatchObject({ status: 'split', outputs: 10, outcome: 'pending' });
    expect(await pool.status()).toMatchObject({ free: { count: 0 }, pending: { count: 11 }, unsettledTransactions: 1 });
    arc.holdBelowSeen = false;
    clock.advance(60_000);
    expect(await splitter.ensureLowWater({ lowWater: 5, target: 10, satoshisEach: 1000 })).toEqual({
      status: 'sufficient',
      usable: 10,
    });
    expect(await pool.status()).toMatchObject({ free: { count: 11 }, pending: { count: 0 }, unsettledTransactions: 0 });
  });

  it('upkeep: a matured coinbase paying the funding address is imported, split, and accepted by the validating ARC', async () => {
    const { pool, arc, splitter } = setup();
    const coinbase = new Transaction(
      1,
      [
        {
          sourceTXID: '0'.repeat(64),
          sourceOutputIndex: 0xffffffff,
          sequence: 0xffffffff,
          unlockingScript: UnlockingScript.fromHex('0101'),
        },
      ],
      [{ satoshis: 5_000_000_000, lockingScript: fundingScript() }],
      0,
    );
    const coin = { txId: coinbase.id('hex'), vout: 0, satoshis: 5_000_000_000 };
    arc.fund(coin);
    const source: CoinbaseSource = {
      tipHeight: async () => 3,
      coinbaseAt: async (h) => (h === 0 ? { height: 0, blockHash: 'a'.repeat(64), hex: coinbase.toHex() } : null),
    };
    const scanner = new CoinbaseScanner({ pool, source, fundingScriptHex: identity.lockingScriptHex, maturity: 2 });
    const report = await walletUpkeep({ pool, splitter, scanner }, { lowWater: 10, target: 25, satoshisEach: 1000 });
    expect(report.swept).toBe(0);
    expect(report.scan?.imported).toEqual([coin]);
    expect(report.split).toMatchObject({ status: 'split', outputs: 25, outcome: 'accepted' });
    expect(arc.ledger.get(toOutpoint(coin))?.spentBy).toBe(
      report.split?.status === 'split' ? report.split.txId : 'none',
    );
    expect(await pool.denominatedCount(1000)).toBe(25);
  });

  it('a fee refusal (465) does not prove the split can never be mined: it is settled, its input dropped, never returned to free', async () => {
    const { pool, arc, splitter, big } = setup();
    const coin = big(100_000);
    arc.fund(coin);
    arc.minSatsPerKb = 1000;
    await pool.add([coin]);
    const report = await splitter.ensureLowWater({ lowWater: 5, target: 10, satoshisEach: 1000 });
    expect(report).toMatchObject({ status: 'rejected', code: '465', inputsReleased: false });
    expect(await pool.status()).toMatchObject({
      balance: 0,
      free: { count: 0 },
      pending: { count: 0 },
      spentUnconfirmed: { count: 0 },
      unsettledTransactions: 0,
    });
  });

  it('a transaction whose signatures do not verify is rejected (461) and changes nothing for good', async () => {
    const { pool, arc, big } = setup();
    const wrongKey = new Splitter({
      pool,
      builder: new SdkSplitBuilder(1, keys.link),
      submit: arc.submit,
      satoshisPerKilobyte: 1,
    });
    const coin = big(100_000);
    arc.fund(coin);
    await pool.add([coin]);
    expect(await wrongKey.ensureLowWater({ lowWater: 5, target: 10, satoshisEach: 1000 })).toMatchObject({
      status: 'rejected',
      code: '461',
      inputsReleased: true,
    });
    expect(arc.accepted).toEqual([]);
    expect(await pool.status()).toMatchObject({ balance: 100_000, free: { count: 1 } });
  });

  it('an input the network saw spent (DOUBLE_SPEND_ATTEMPTED, which may still end MINED): the split waits, its input never returned to free', async () => {
    const { pool, arc, splitter, big } = setup();
    const coin = big(100_000);
    arc.fund(coin);
    arc.ledger.set(toOutpoint(coin), {
      satoshis: 100_000,
      scriptHex: identity.lockingScriptHex,
      spentBy: 'f'.repeat(64),
    });
    await pool.add([coin]);
    const report = await splitter.ensureLowWater({ lowWater: 5, target: 10, satoshisEach: 1000 });
    expect(report).toMatchObject({ status: 'split', outcome: 'pending' });
    expect(await pool.status()).toMatchObject({
      free: { count: 0 },
      spentUnconfirmed: { count: 1, satoshis: 100_000 },
      unsettledTransactions: 1,
    });
  });

  it('nothing large enough to split: exhausted, nothing reserved', async () => {
    const { pool, arc, splitter } = setup();
    const small = Array.from({ length: 3 }, (_, vout) => ({
      txId: randomBytes(32).toString('hex'),
      vout,
      satoshis: 1000,
    }));
    small.forEach((u) => arc.fund(u));
    await pool.add(small);
    expect(await splitter.ensureLowWater({ lowWater: 5, target: 10, satoshisEach: 1000 })).toEqual({
      status: 'exhausted',
      usable: 3,
      availableSatoshis: 0,
    });
    expect(await pool.status()).toMatchObject({ free: { count: 3 }, leased: { count: 0 } });
    expect(arc.accepted).toEqual([]);
  });

  it('force splits above the low-water mark up to the target (the CLI)', async () => {
    const { pool, arc, splitter, big } = setup();
    const coin = big(1_000_000);
    arc.fund(coin);
    await pool.add([coin]);
    await splitter.ensureLowWater({ lowWater: 1, target: 5, satoshisEach: 1000 });
    expect(await splitter.ensureLowWater({ lowWater: 1, target: 5, satoshisEach: 1000 })).toMatchObject({
      status: 'sufficient',
    });
    const forced = await splitter.ensureLowWater({ lowWater: 1, target: 20, satoshisEach: 1000, force: true });
    expect(forced).toMatchObject({ status: 'split', outcome: 'accepted' });
    expect(await pool.denominatedCount(1000)).toBe(20);
  });

  it('several shards: a split for the whole pool sends each output straight to the shard with the fewest; a confirmer killed before dropping its notes leaves them to the next upkeep, nothing lost or registered twice', async () => {
    const { clock, pool, arc, splitter, big, poolPrefix } = setup({ partitions: 8 });
    const units = pool.partitions.units;
    const coin = big(5_000_000);
    arc.fund(coin);
    await pool.add([coin]);
    const home = (await reservoir(pool)).partition;
    // Five denomination UTXOs already in another shard: the split levels the others up to it.
    const other = units.find((u) => u !== home) as string;
    const held = Array.from({ length: 5 }, () => big(1000));
    held.forEach((u) => arc.fund(u));
    await pool.add(held, { partition: other });
    const levels = () => Promise.all(units.map((partition) => pool.denominatedCount(1000, { partition })));
    const report = await splitter.ensureLowWater({
      lowWater: 85,
      target: 85,
      satoshisEach: 1000,
      partition: home,
      wholePool: true,
    });
    expect(report).toMatchObject({ status: 'split', outputs: 80, outcome: 'accepted' });
    // 85 over 8 shards: 10 or 11 each, with nothing left to move and no note left behind.
    expect((await levels()).every((c) => c === 10 || c === 11)).toBe(true);
    expect(await pool.denominatedCount(1000)).toBe(85);
    expect(await rebalance(pool, 1000)).toBe(0);
    for (const unit of units) expect(await redis.exists(pool.keysOf(unit).moving)).toBe(0);

    // A confirmer killed after the confirm script and after adding the outputs to their shards,
    // before it dropped a note: its connection dies at its first HDEL.
    const dying = new Proxy(redis, {
      get(target, prop) {
        if (prop === 'hdel') return () => Promise.reject(new Error('killed'));
        const value: unknown = Reflect.get(target, prop, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const killed = new Splitter({
      pool: new FundingPool(dying, { prefix: poolPrefix, address: identity.address, clock, partitions: 8 }),
      builder: new SdkSplitBuilder(1),
      submit: arc.submit,
      satoshisPerKilobyte: 1,
    });
    await expect(
      killed.ensureLowWater({
        lowWater: 1,
        target: 165,
        satoshisEach: 1000,
        partition: home,
        wholePool: true,
        force: true,
      }),
    ).rejects.toThrow('killed');
    const notes = await redis.hlen(pool.keysOf(home).moving);
    expect(notes).toBeGreaterThan(60);
    // Settled (no longer pending anywhere), every output free in its shard, the notes still there.
    expect(await pool.status()).toMatchObject({ pending: { count: 0 }, unsettledTransactions: 0 });
    expect(await pool.denominatedCount(1000)).toBe(165);
    // The next upkeep finishes them, each once; a second pass adds nothing.
    const upkeep = await walletUpkeep(
      { pool, splitter, scanner: null },
      { lowWater: 100, target: 165, satoshisEach: 1000 },
    );
    expect(upkeep).toMatchObject({ split: { status: 'sufficient', usable: 165 }, moved: 0 });
    expect(await pool.finishMoves()).toBe(0);
    for (const unit of units) expect(await redis.exists(pool.keysOf(unit).moving, pool.keysOf(unit).arrived)).toBe(0);
    expect((await levels()).every((c) => c === 20 || c === 21)).toBe(true);
    // Every free UTXO once, in one shard, unspent on the ledger and ours; the counters agree.
    const free = await pool.freeOutpoints();
    const status = await pool.status();
    expect(free.size).toBe(status.free.count);
    expect(status.free.count).toBe(166);
    for (const op of free.keys()) expect(arc.ledger.get(op)).toMatchObject({ scriptHex: identity.lockingScriptHex });
    for (const op of free.keys()) expect(arc.ledger.get(op)?.spentBy).toBeUndefined();
  });
});
