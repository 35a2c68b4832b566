import type { Redis } from 'ioredis';
import { blockHash as hashOfHeader, parseHeader, tscProof } from '@proofline/chain-domain';
import type { Block, ChainReader, ChainTip, Outpoint, TxInclusion } from '@proofline/chain-domain';
import { devnetCommands } from './commands';
import type { DevnetCommands } from './commands';
import { devnetKeys, outpointField } from './keys';
import type { DevnetKeys } from './keys';

/** A devnet block: the port's {@link Block} with its whole transaction list (the devnet stores it as one value). */
export interface DevnetBlock extends Block {
  /** Coinbase first. */
  readonly txIds: readonly string[];
}

export type { ChainTip } from '@proofline/chain-domain';

/** Read side of the devnet: batched inclusions with TSC proofs, blocks, spends. */
export class DevnetReader implements ChainReader {
  private readonly keys: DevnetKeys;
  private readonly commands: DevnetCommands;

  constructor(
    private readonly redis: Redis,
    prefix: string,
  ) {
    this.keys = devnetKeys(prefix);
    this.commands = devnetCommands(redis);
  }

  /** Height of the tip; -1 before the genesis block. */
  async tipHeight(): Promise<number> {
    const h = await this.redis.hget(this.keys.tip, 'height');
    return h === null ? -1 : Number(h);
  }

  async tip(): Promise<ChainTip | null> {
    const t = await this.redis.hgetall(this.keys.tip);
    return t['hash']
      ? { hash: t['hash'], height: Number(t['height']), time: new Date(Number(t['time']) * 1000) }
      : null;
  }

  /** Where each txId is mined, with its TSC proof, in one round trip (null: not mined). */
  async inclusions(txIds: readonly string[]): Promise<(TxInclusion | null)[]> {
    if (txIds.length === 0) return [];
    const flat = await this.commands.inclusions(this.keys.mined, this.keys.headers, ...txIds);
    return txIds.map((txId, i) => {
      const value = flat[2 * i];
      const headerHex = flat[2 * i + 1];
      if (!value || !headerHex) return null;
      const [blockHash, height, index, nodes] = value.split('|') as [string, string, string, string];
      const header = parseHeader(headerHex);
      return {
        blockHash,
        blockHeight: Number(height),
        blockTime: new Date(header.time * 1000),
        index: Number(index),
        proof: tscProof(Number(index), txId, headerHex, nodes === '' ? [] : nodes.split(',')),
      };
    });
  }

  async blockByHash(hash: string): Promise<DevnetBlock | null> {
    const replies = await this.redis
      .pipeline()
      .hget(this.keys.headers, hash)
      .hget(this.keys.heights, hash)
      .hget(this.keys.blockTxIds, hash)
      .exec();
    const [headerHex, height, txIds] = (replies ?? []).map(([err, v]) => {
      if (err) throw err;
      return v as string | null;
    });
    if (!headerHex || !height || !txIds) return null;
    const header = parseHeader(headerHex);
    if (hashOfHeader(headerHex) !== hash) throw new Error(`stored header of ${hash} does not hash to it`);
    const ids = txIds.split(',');
    return {
      hash,
      height: Number(height),
      header,
      headerHex,
      time: new Date(header.time * 1000),
      txCount: ids.length,
      txIds: ids,
    };
  }

  async blockByHeight(height: number): Promise<DevnetBlock | null> {
    const hash = await this.redis.hget(this.keys.hashes, String(height));
    return hash === null ? null : this.blockByHash(hash);
  }

  /** TxIds of block `hash` in positions [start, end), or null when no such block (one read). */
  async blockTxIds(hash: string, start: number, end: number): Promise<readonly string[] | null> {
    const txIds = await this.redis.hget(this.keys.blockTxIds, hash);
    return txIds === null ? null : txIds.split(',').slice(start, end);
  }

  /** The txId that spends each outpoint (accepted, mined or not), or null: one round trip. */
  async spentBy(outpoints: readonly Pick<Outpoint, 'txId' | 'vout'>[]): Promise<(string | null)[]> {
    if (outpoints.length === 0) return [];
    return this.redis.hmget(this.keys.spent, ...outpoints.map((o) => outpointField(o.txId, o.vout)));
  }

  /** Raw hex of an accepted or mined transaction. */
  async rawTransaction(txId: string): Promise<string | null> {
    return this.redis.hget(this.keys.raw, txId);
  }

  /** TxIds waiting for a block, oldest first. */
  async mempool(limit = 1000): Promise<string[]> {
    return this.redis.zrange(this.keys.mempool, 0, limit - 1);
  }
}
