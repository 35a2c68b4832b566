import type { Redis } from 'ioredis';
import type { Block, BlockEvent, BlockReader, ChainTip } from '@proofline/chain-domain';
import type { DevnetReader } from './devnet-reader';
import { devnetKeys } from './keys';

/**
 * The devnet's {@link BlockReader}: blocks from the reader, block events from the producer's
 * Redis pub/sub channel on a subscriber connection the app opened (one SUBSCRIBE per process,
 * fanned out to every open iterator). The subscriber is the app's: `close()` only unsubscribes.
 */
export class DevnetBlocks implements BlockReader {
  private readonly channel: string;
  private readonly open = new Set<{ readonly push: (event: BlockEvent) => void; readonly end: () => void }>();
  private subscribed: Promise<unknown> | null = null;
  private readonly onMessage = (channel: string, message: string): void => {
    if (channel !== this.channel) return;
    let event: BlockEvent;
    try {
      event = JSON.parse(message) as BlockEvent;
    } catch {
      return; // not the producer's message: consumers re-read state, a dropped event only delays them
    }
    for (const iterator of this.open) iterator.push(event);
  };

  constructor(
    private readonly reader: DevnetReader,
    private readonly subscriber: Redis,
    prefix: string,
  ) {
    this.channel = devnetKeys(prefix).blockEvents;
  }

  tip(): Promise<ChainTip | null> {
    return this.reader.tip();
  }

  blockByHash(hash: string): Promise<Block | null> {
    return this.reader.blockByHash(hash);
  }

  blockByHeight(height: number): Promise<Block | null> {
    return this.reader.blockByHeight(height);
  }

  blockTxIds(hash: string, start: number, end: number): Promise<readonly string[] | null> {
    return this.reader.blockTxIds(hash, start, end);
  }

  blockEvents(): AsyncIterableIterator<BlockEvent> {
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
    const finish = (): Promise<IteratorResult<BlockEvent>> => {
      entry.end();
      return Promise.resolve({ value: undefined, done: true });
    };
    const iterator: AsyncIterableIterator<BlockEvent> = {
      next: () => {
        const event = queued.shift();
        if (event) return Promise.resolve({ value: event, done: false });
        if (done) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve) => waiting.push(resolve));
      },
      return: finish,
      [Symbol.asyncIterator]: () => iterator,
    };
    return iterator;
  }

  /** Ends every open iterator and unsubscribes (the connection stays the app's to close). */
  async close(): Promise<void> {
    for (const iterator of [...this.open]) iterator.end();
    if (this.subscribed) {
      this.subscriber.off('message', this.onMessage);
      this.subscribed = null;
      await this.subscriber.unsubscribe(this.channel).catch(() => undefined);
    }
  }
}
