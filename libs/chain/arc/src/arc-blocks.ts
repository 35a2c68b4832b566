import type { RedisClient } from '@proofline/shared-redis';
import { parseHeader } from '@proofline/chain-domain';
import type {
  Block,
  BlockEvent,
  BlockReader,
  ChainTip,
  OwnerBlock,
  OwnerBlocksPage,
  OwnerBlocksWindow,
} from '@proofline/chain-domain';
import { arcKeys } from './proof-store';
import type { ArcProofStore, StoredBlock } from './proof-store';

/**
 * The {@link BlockReader} of the ARC path: blocks as this service verified them (headers it
 * checked against the headers source, with the proofs it stored), never a node's internals.
 *
 * Differences from a full node's view, by design: a block is known once the tracker stored a
 * proof in it or saw it as the tip; `txCount` and `blockTxIds` cover the transactions this
 * service proved in that block (in block order), not the whole block (ARC serves no block
 * bodies). Block events come from the tracker (`publishBlockEvent`) over Redis pub/sub on a
 * subscriber connection the app opened; `close()` only unsubscribes.
 */
/** How far below a tip without a stored header `tip()` looks for the newest stored block. */
const TIP_FALLBACK_HEIGHTS = 16;

export class ArcBlocks implements BlockReader {
  private readonly channel: string;
  private readonly open = new Set<{ readonly push: (event: BlockEvent) => void; readonly end: () => void }>();
  private subscribed: Promise<unknown> | null = null;
  private readonly onMessage = (channel: string, message: string): void => {
    if (channel !== this.channel) return;
    let event: BlockEvent;
    try {
      event = JSON.parse(message) as BlockEvent;
    } catch {
      return; // not ours: consumers re-read state, a dropped event only delays them
    }
    for (const iterator of this.open) iterator.push(event);
  };

  constructor(
    private readonly store: ArcProofStore,
    private readonly subscriber: RedisClient | null,
    prefix: string,
  ) {
    this.channel = arcKeys(prefix).blockEvents;
  }

  /**
   * The newest block whose header the service stored. The confirmation pass records a new tip
   * (from the headers source) before it stores that block's header, so for a moment the reported
   * tip may have no header yet: then the newest stored block below it is the tip readers get
   * (a few heights at most), never null while any block is known.
   */
  async tip(): Promise<ChainTip | null> {
    const tip = await this.store.tip();
    if (!tip) return null;
    const newest = await this.store.blockByHash(tip.hash);
    if (newest) return { hash: tip.hash, height: tip.height, time: newest.time };
    for (let height = tip.height - 1; height >= 0 && height >= tip.height - TIP_FALLBACK_HEIGHTS; height--) {
      const block = await this.store.blockByHeight(height);
      if (block) return { hash: block.hash, height: block.height, time: block.time };
    }
    return null;
  }

  async blockByHash(hash: string): Promise<Block | null> {
    const stored = await this.store.blockByHash(hash);
    return stored ? this.toBlock(stored) : null;
  }

  async blockByHeight(height: number): Promise<Block | null> {
    const stored = await this.store.blockByHeight(height);
    return stored ? this.toBlock(stored) : null;
  }

  async blockTxIds(hash: string, start: number, end: number): Promise<readonly string[] | null> {
    if (!(await this.store.blockByHash(hash))) return null;
    return (await this.store.txIdsOfBlock(hash)).slice(Math.max(0, start), Math.max(0, end));
  }

  ownerBlocks(owner: string, page: OwnerBlocksPage): Promise<OwnerBlocksWindow> {
    return this.store.ownerBlocks(owner, page);
  }

  ownerBlock(owner: string, hash: string): Promise<OwnerBlock | null> {
    return this.store.ownerBlock(owner, hash);
  }

  ownerTxIds(owner: string, hash: string, start: number, end: number): Promise<{ count: number; txIds: string[] }> {
    return this.store.ownerTxIds(owner, hash, start, end);
  }

  blockEvents(): AsyncIterableIterator<BlockEvent> {
    if (!this.subscriber) throw new Error('block events need a subscriber connection (createArcChain({ subscriber }))');
    if (!this.subscribed) {
      this.subscriber.on('message', this.onMessage);
      this.subscribed = this.subscriber.subscribe(this.channel);
    }
    const queued: BlockEvent[] = [];
    const waiting: ((r: IteratorResult<BlockEvent>) => void)[] = [];
    let done = false;
    const entry = {
      push: (event: BlockEvent): void => {
        const next = waiting.shift();
        if (next) next({ value: event, done: false });
        else queued.push(event);
      },
      end: (): void => {
        done = true;
        this.open.delete(entry);
        for (const w of waiting.splice(0)) w({ value: undefined, done: true });
      },
    };
    this.open.add(entry);
    const iterator: AsyncIterableIterator<BlockEvent> = {
      next: () => {
        const event = queued.shift();
        if (event) return Promise.resolve({ value: event, done: false });
        if (done) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve) => waiting.push(resolve));
      },
      return: () => {
        entry.end();
        return Promise.resolve({ value: undefined, done: true });
      },
      [Symbol.asyncIterator]: () => iterator,
    };
    return iterator;
  }

  /** Ends every open iterator and unsubscribes (the connection stays the app's to close). */
  async close(): Promise<void> {
    for (const iterator of [...this.open]) iterator.end();
    if (this.subscribed && this.subscriber) {
      this.subscriber.off('message', this.onMessage);
      this.subscribed = null;
      await this.subscriber.unsubscribe(this.channel).catch(() => undefined);
    }
  }

  private async toBlock(stored: StoredBlock): Promise<Block> {
    const txIds = await this.store.txIdsOfBlock(stored.hash);
    return {
      hash: stored.hash,
      height: stored.height,
      header: parseHeader(stored.headerHex),
      headerHex: stored.headerHex,
      time: stored.time,
      txCount: txIds.length,
    };
  }
}

/** Announces a block on the ARC block-event channel (`BlockEvent` JSON), so subscriptions re-read at once. */
export async function publishBlockEvent(
  redis: RedisClient,
  prefix: string,
  store: ArcProofStore,
  hash: string,
): Promise<BlockEvent | null> {
  const block = await store.blockByHash(hash);
  if (!block) return null;
  const event: BlockEvent = {
    hash,
    height: block.height,
    time: Math.floor(block.time.getTime() / 1000),
    txCount: (await store.txIdsOfBlock(hash)).length,
  };
  await redis.publish(arcKeys(prefix).blockEvents, JSON.stringify(event));
  return event;
}
