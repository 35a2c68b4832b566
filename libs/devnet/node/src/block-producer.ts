import type { RedisClient } from '@proofline/shared-redis';
import { REGTEST_BITS, ZERO_HASH, merkleBranches, mineHeader } from '@proofline/chain-domain';
import type { BlockHeader } from '@proofline/chain-domain';
import { DEVNET_SUBSIDY, buildCoinbaseTo, deriveChainKeys } from '@proofline/chain-bsv';
import type { ChainKeys } from '@proofline/chain-bsv';
import { fromScriptReply } from '@proofline/shared-redis';
import { blockContentKeys, blockTxArgs, devnetCommands } from './commands';
import type { DevnetCommands } from './commands';
import { devnetKeys, outpointField } from './keys';
import type { DevnetKeys } from './keys';
import { COMMIT_BLOCK_REPLIES } from './script-replies';

/** Header version of devnet blocks (BIP9 top bits, as current nodes use). */
export const DEVNET_BLOCK_VERSION = 0x20000000;
/** Default cap of transactions per block (besides the coinbase), oldest first; the rest waits. */
export const DEFAULT_MAX_TXS_PER_BLOCK = 10_000;

export interface BlockProducerOptions {
  /** Key seed for the coinbase (miner) key; default the dev seed. */
  readonly seed?: string;
  readonly keys?: ChainKeys;
  readonly maxTxsPerBlock?: number;
  /** Commit attempts when another producer moved the tip in between (default 5). */
  readonly attempts?: number;
  /**
   * Locking script (hex) every coinbase pays; default the miner key's P2PKH. The devnet node
   * passes the service wallet's funding script, so mined coinbases fund the service.
   */
  readonly coinbaseLockingScriptHex?: string;
  /** Coinbase tag (scriptSig text); default 'proofline devnet'. */
  readonly coinbaseTag?: string;
}

/** What a producer read: the tip and the oldest mempool txIds, in one MULTI. */
export interface ChainSnapshot {
  readonly tip: { readonly hash: string; readonly height: number; readonly time: number } | null;
  readonly mempool: readonly string[];
}

/** A block ready to commit (nothing stored yet). */
export interface CandidateBlock {
  readonly prevHash: string;
  readonly hash: string;
  readonly height: number;
  readonly header: BlockHeader;
  readonly headerHex: string;
  /** Coinbase first. */
  readonly txIds: readonly string[];
  readonly coinbase: { readonly txId: string; readonly rawHex: string };
  readonly branches: readonly (readonly string[])[];
}

export type CommitResult = { readonly status: 'committed' } | { readonly status: 'stale'; readonly reason: string };

export type ProduceResult =
  | { readonly status: 'produced'; readonly hash: string; readonly height: number; readonly txCount: number }
  | { readonly status: 'stale'; readonly reason: string };

/**
 * The devnet's block producer. A block = coinbase + the oldest mempool transactions, a real
 * 80-byte header chained to the tip (regtest bits, real nonce search), committed with a Lua
 * compare-and-set on the tip that also removes exactly the included txIds from the mempool and
 * stores every transaction's Merkle branch in the same step (so a mined tx always has its proof).
 * MUST NOT remove anything from the mempool before the commit: a producer that crashes or loses
 * a race changes nothing. Safe to run concurrently (the BullMQ scheduler makes that rare).
 */
export class DevnetBlockProducer {
  private readonly keys: DevnetKeys;
  private readonly commands: DevnetCommands;
  private readonly chainKeys: ChainKeys;
  private readonly maxTxs: number;
  private readonly attempts: number;
  private readonly coinbaseScriptHex: string;
  private readonly coinbaseTag: string;

  constructor(
    private readonly redis: RedisClient,
    prefix: string,
    options: BlockProducerOptions = {},
  ) {
    this.keys = devnetKeys(prefix);
    this.commands = devnetCommands(redis);
    this.chainKeys = options.keys ?? deriveChainKeys(options.seed);
    this.maxTxs = options.maxTxsPerBlock ?? DEFAULT_MAX_TXS_PER_BLOCK;
    this.attempts = options.attempts ?? 5;
    this.coinbaseScriptHex =
      options.coinbaseLockingScriptHex ?? `76a914${Buffer.from(this.chainKeys.miner.pubKeyHash).toString('hex')}88ac`;
    this.coinbaseTag = options.coinbaseTag ?? 'proofline devnet';
  }

  /**
   * Produces one block at header time `now` (the genesis block first, on first use), retrying
   * when another producer committed in between. Empty blocks are produced too, so confirmations
   * keep counting.
   */
  async produceBlock(now: Date): Promise<ProduceResult> {
    let reason = '';
    for (let attempt = 0; attempt < this.attempts; attempt++) {
      const candidate = await this.prepareBlock(now);
      const result = await this.commitBlock(candidate);
      if (result.status === 'committed') {
        if (candidate.height === 0) continue; // genesis made: now the block with the mempool
        return { status: 'produced', hash: candidate.hash, height: candidate.height, txCount: candidate.txIds.length };
      }
      reason = result.reason;
    }
    return { status: 'stale', reason };
  }

  /** Reads the tip and the mempool head atomically. */
  async snapshot(): Promise<ChainSnapshot> {
    const replies = await this.redis
      .multi()
      .hgetall(this.keys.tip)
      .zrange(this.keys.mempool, 0, this.maxTxs - 1)
      .exec();
    if (!replies) throw new Error('snapshot transaction aborted');
    const [[tipErr, tip], [memErr, mempool]] = replies as [
      [Error | null, Record<string, string>],
      [Error | null, string[]],
    ];
    if (tipErr || memErr) throw tipErr ?? memErr;
    return {
      tip: tip['hash'] ? { hash: tip['hash'], height: Number(tip['height']), time: Number(tip['time']) } : null,
      mempool,
    };
  }

  /** Builds (but does not store) the next block: genesis when the chain is empty. */
  async prepareBlock(now: Date): Promise<CandidateBlock> {
    return this.buildCandidate(await this.snapshot(), now);
  }

  buildCandidate(snapshot: ChainSnapshot, now: Date): CandidateBlock {
    const height = snapshot.tip ? snapshot.tip.height + 1 : 0;
    const coinbase = buildCoinbaseTo(height, this.coinbaseScriptHex, this.coinbaseTag);
    const txIds = [coinbase.txId, ...(snapshot.tip ? snapshot.mempool : [])];
    const { root, branches } = merkleBranches(txIds);
    const time = Math.max(Math.floor(now.getTime() / 1000), snapshot.tip?.time ?? 0);
    const prevHash = snapshot.tip?.hash ?? ZERO_HASH;
    const mined = mineHeader({
      version: DEVNET_BLOCK_VERSION,
      prevHash,
      merkleRoot: root,
      time,
      bits: REGTEST_BITS,
      nonce: 0,
    });
    return {
      prevHash: snapshot.tip?.hash ?? '',
      hash: mined.hash,
      height,
      header: mined.header,
      headerHex: mined.hex,
      txIds,
      coinbase,
      branches,
    };
  }

  /** The compare-and-set commit; refused (writing nothing) when the tip or mempool moved. */
  async commitBlock(b: CandidateBlock): Promise<CommitResult> {
    const k = this.keys;
    const [status, detail] = await this.commands.commitBlock(
      k.tip,
      k.mempool,
      ...blockContentKeys(k),
      b.prevHash,
      b.hash,
      String(b.height),
      String(b.header.time),
      b.headerHex,
      b.coinbase.txId,
      b.coinbase.rawHex,
      outpointField(b.coinbase.txId, 0),
      String(DEVNET_SUBSIDY),
      ...blockTxArgs(b.hash, b.height, b.txIds, b.branches),
    );
    if (fromScriptReply('commit-block-9.lua', COMMIT_BLOCK_REPLIES, status) === 'committed')
      return { status: 'committed' };
    return { status: 'stale', reason: `${String(status)} ${String(detail ?? '')}`.trim() };
  }
}
