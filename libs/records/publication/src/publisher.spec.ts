import { recordsKeys } from '@proofline/records-data-access';
import { InMemoryChain } from '@proofline/records-testing';
import type { BroadcastVerdict, ChainPublisher } from '@proofline/chain-domain';
import { eventually, uniquePrefix } from '@proofline/shared-testing';
import { QUEUES, bullPrefix } from '@proofline/shared-jobs';
import type { PublishQueue } from '@proofline/records-feature';
import { BullPublishQueue, PUBLISH_EVENTS_MAX_LEN, SWEEP_DEFER_MS } from './producer';
import { extendChain, publisherTestbed, tenant } from './testing/publisher-testbed';
import type { RecordsPublisherOptions } from './worker';

/** ARC's verdict on a transaction whose script fails (461). */
const badScript = (txId: string): BroadcastVerdict => ({
  kind: 'refused',
  txId,
  code: 461,
  reason: 'bad script',
  final: true,
  competingTxs: [],
});

describe('records publisher (real Redis, real BullMQ)', () => {
  const bed = publisherTestbed('pub', {
    fund: 200,
    producer: (connection, prefix) => new BullPublishQueue(connection, prefix),
  });
  const { prefix, redis, connection, store, clock, running, producer: queue } = bed;
  const start = (chain: ChainPublisher, extra: Partial<RecordsPublisherOptions> = {}) =>
    bed.start(chain, { sweepEveryMs: 0, ...extra });
  const service = (chain: InMemoryChain, q: PublishQueue = queue) => bed.records(chain, q).writes;
  const reads = (chain: InMemoryChain) => bed.records(chain, queue).reads;
  /** A create and its update written on a fresh chain, neither enqueued (their jobs "lost"). */
  const unqueuedCreateAndUpdate = async () => {
    const chain = new InMemoryChain();
    const lost: PublishQueue = { enqueue: async () => undefined };
    const svc = service(chain, lost);
    const created = await svc.createLinked(tenant, { body: Buffer.from('a'), encode: undefined });
    const updated = await svc.updateLinked(tenant, created.txId, {
      body: Buffer.from('b'),
      encode: undefined,
      updateToken: created.updateToken,
    });
    return { chain, created, updated };
  };
  /** Resolves once every job has left the queue (completed or failed for good: both are removed). */
  const drained = () =>
    eventually(
      async () =>
        Object.values(await queue.queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized')).every(
          (n) => n === 0,
        ),
      10_000,
    );

  /**
   * Publishes `created` (a job of its own) and waits for the queue to drain: its chain follow
   * reached `updated` and did not publish it, which must be left pending and due for the sweeper now.
   */
  const followLeavesToSweeper = async (created: string, updated: string) => {
    await queue.enqueueMany([created]);
    await eventually(async () => (await store.state(created)) === 'published', 10_000);
    await drained();
    expect(await store.state(updated)).toBe('pending');
    expect(Number(await redis.zscore(recordsKeys(prefix).outbox, updated))).toBeLessThanOrEqual(clock.now().getTime());
  };

  /** A chain publisher that holds the submission of one txId (named later) until released; the rest go straight to `chain`. */
  const holdingOne = (chain: InMemoryChain) => {
    let release: () => void = () => undefined;
    const held = new Promise<void>((r) => {
      release = r;
    });
    let heldTxId = '';
    const publisher: ChainPublisher = {
      submit: async (tx) => (tx.txId === heldTxId ? held.then(() => chain.submit(tx)) : chain.submit(tx)),
    };
    return {
      publisher,
      hold: (txId: string) => {
        heldTxId = txId;
      },
      release: () => release(),
    };
  };

  it('a job held by a worker that dies is re-run by another and the record is published exactly once', async () => {
    const chain = new InMemoryChain();
    let hungCalls = 0;
    let release: (r: BroadcastVerdict) => void = () => undefined;
    let hungSubmit: Promise<BroadcastVerdict> = Promise.reject(new Error('never submitted'));
    hungSubmit.catch(() => undefined);
    const hung: ChainPublisher = {
      submit: (tx) => {
        hungCalls++;
        hungSubmit = new Promise<BroadcastVerdict>((resolve) => {
          release = (r) => resolve(r);
        }).then(() => chain.submit(tx));
        return hungSubmit;
      },
    };
    const first = start(hung, { lockDuration: 1000, stalledInterval: 500 });
    const { txId } = await service(chain).writeIndependent(tenant, { body: Buffer.from('x'), encode: 'SHA256' });
    await eventually(async () => hungCalls === 1, 5000);
    // the worker dies with the job in hand: its lock is no longer renewed
    await first.close(true);
    running.splice(running.indexOf(first), 1);
    start(chain, { lockDuration: 1000, stalledInterval: 500 });
    await eventually(async () => (await store.state(txId)) === 'published', 15_000);
    // the dead worker's submit finally returns: idempotent by txId
    release({ kind: 'accepted', txId, status: 'SEEN_ON_NETWORK', mined: null });
    expect(await hungSubmit).toEqual({ kind: 'accepted', txId, status: 'SEEN_ON_NETWORK', mined: null });
    const block = chain.mine();
    expect(block.txIds.filter((t) => t === txId)).toHaveLength(1);
    expect(await store.outboxSize()).toBe(0);
    expect(await store.state(txId)).toBe('published');
  });

  it('a write whose enqueue was lost is published by the outbox sweeper', async () => {
    const chain = new InMemoryChain();
    const lost: PublishQueue = { enqueue: () => Promise.reject(new Error('api died')) };
    const { txId } = await service(chain, lost).createLinked(tenant, { body: Buffer.from('x'), encode: undefined });
    expect(await queue.queue.getJob(txId)).toBeUndefined();
    const publisher = start(chain);
    expect(await publisher.sweep()).toBe(0); // too young: the API may still be enqueueing it
    clock.advance(6000);
    expect(await publisher.sweep()).toBe(1);
    await eventually(async () => (await store.state(txId)) === 'published', 10_000);
    expect(await store.outboxSize()).toBe(0);
    expect(await publisher.sweep()).toBe(0);
    // sweeping twice or enqueueing again never publishes twice
    await queue.enqueue(txId);
    await drained();
    expect(chain.accepted.get(txId)).toBe(1);
  });

  it('a batch job that fails for good hands its unpublished records to the sweeper at once, not SWEEP_DEFER_MS later', async () => {
    const chain = new InMemoryChain();
    const lost: PublishQueue = { enqueue: async () => undefined };
    const { txId } = await service(chain, lost).writeIndependent(tenant, { body: Buffer.from('x'), encode: undefined });
    // As when its batch job was added: the sweeper leaves the record to the job for a minute.
    await store.deferSweep([txId], new Date(clock.now().getTime() + SWEEP_DEFER_MS));
    start({ submit: () => Promise.reject(new Error('ARC unreachable')) });
    await queue.queue.add(
      'publish',
      { txIds: [txId] },
      { jobId: `batch-${txId}`, attempts: 1, removeOnComplete: true, removeOnFail: true },
    );
    await drained();
    // Its one attempt failed: the record is due for the sweeper now, and swept once it is old enough.
    await eventually(
      async () => Number(await redis.zscore(recordsKeys(prefix).outbox, txId)) <= clock.now().getTime(),
      5000,
    );
    expect(await store.state(txId)).toBe('pending');
    for (const p of running.splice(0)) await p.close();
    const publisher = start(chain);
    clock.advance(6000);
    expect(await publisher.sweep()).toBe(1);
    await eventually(async () => (await store.state(txId)) === 'published', 10_000);
    expect(await store.outboxSize()).toBe(0);
  });

  it('an update waits for the record it spends; a permanent rejection is recorded and not retried', async () => {
    const chain = new InMemoryChain();
    const svc = service(chain);
    const created = await svc.createLinked(tenant, { body: Buffer.from('a'), encode: undefined });
    const updated = await svc.updateLinked(tenant, created.txId, {
      body: Buffer.from('b'),
      encode: undefined,
      updateToken: created.updateToken,
    });
    start(chain, { concurrency: 4 });
    await eventually(async () => (await store.state(updated.txId)) === 'published', 10_000);
    expect(chain.mine().txIds.slice(1)).toEqual([created.txId, updated.txId]);

    let calls = 0;
    const rejecting: ChainPublisher = {
      submit: async (tx) => {
        calls++;
        return badScript(tx.txId);
      },
    };
    for (const p of running.splice(0)) await p.close();
    start(rejecting);
    const doomed = await svc.writeIndependent(tenant, { body: Buffer.from('c'), encode: undefined });
    await eventually(async () => (await store.state(doomed.txId)) === 'failed', 10_000);
    expect((await store.meta(doomed.txId))?.failure).toMatch(/^INVALID_TX/);
    expect(await reads(chain).status('independent', doomed.txId)).toEqual({
      confirmation: null,
      publication: 'failed',
      failure: 'INVALID_TX: bad script',
    });
    expect(await store.outboxSize()).toBe(0);
    await drained();
    expect(calls).toBe(1);
  });

  it('a rejected record fails its pending successors at once, in chain order, funding back to the pool; no job is left re-checking', async () => {
    const chain = new InMemoryChain();
    const lost: PublishQueue = { enqueue: async () => undefined };
    const svc = service(chain, lost);
    const created = await svc.createLinked(tenant, { body: Buffer.from('a'), encode: undefined });
    const updates = await extendChain(svc, created, 5);
    const refused: string[] = [];
    const settlement = {
      accepted: async () => undefined,
      refused: async (txId: string, r: { neverSent: boolean }) => void refused.push(`${txId}:${r.neverSent}`),
    };
    const rejecting: ChainPublisher = {
      submit: async (tx) => badScript(tx.txId),
    };
    start(rejecting, { settlement });
    await queue.enqueue(created.txId);
    await eventually(async () => (await store.state(created.txId)) === 'failed', 10_000);
    // In the same job: every successor failed, none waited for a re-check of its previous record.
    for (const u of updates.slice(1)) {
      expect(await store.state(u.txId)).toBe('failed');
      expect((await store.meta(u.txId))?.failure).toMatch(/^PREVIOUS_REJECTED/);
    }
    expect(refused).toEqual([`${created.txId}:false`, ...updates.slice(1).map((u) => `${u.txId}:true`)]);
    expect(await store.outboxSize()).toBe(0);
    await drained();
    expect(await queue.queue.getJobCounts('delayed')).toEqual({ delayed: 0 });
  });

  it('group commit: concurrent writes share batch jobs, every record is published exactly once', async () => {
    const chain = new InMemoryChain();
    const svc = service(chain);
    const written = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        svc.writeIndependent(tenant, { body: Buffer.from(`batch ${i}`), encode: 'SHA256' }),
      ),
    );
    // The writes do not wait for their jobs (the outbox makes them durable): the batches follow.
    const carrying = (js: Awaited<ReturnType<typeof queue.queue.getJobs>>) =>
      js.flatMap((j) => (j.data as { txIds: string[] }).txIds).length;
    const jobs = await eventually(async () => {
      const js = await queue.queue.getJobs(['waiting']);
      return carrying(js) >= written.length ? js : undefined;
    }, 5000);
    // fewer jobs than writes, and together they carry each txId exactly once
    expect(jobs.length).toBeLessThan(written.length);
    const carried = jobs.flatMap((j) => (j.data as { txIds: string[] }).txIds);
    expect(carried.sort()).toEqual(written.map((w) => w.txId).sort());
    expect(jobs.every((j) => j.id === `batch-${(j.data as { txIds: string[] }).txIds[0]}`)).toBe(true);
    start(chain);
    await eventually(
      async () => (await Promise.all(written.map((w) => store.state(w.txId)))).every((st) => st === 'published'),
      10_000,
    );
    for (const w of written) expect(chain.accepted.get(w.txId)).toBe(1);
    expect(await store.outboxSize()).toBe(0);
    await drained();
  });

  it('PUBLISH_COALESCE_MS: records that arrive one at a time within the window share one batch job', async () => {
    const windowed = new BullPublishQueue(connection, prefix, { coalesceMs: 300 });
    const ids = ['a', 'b', 'c'].map((c) => c.repeat(64));
    try {
      const added: Promise<void>[] = [];
      for (const id of ids) {
        added.push(windowed.enqueue(id));
        await new Promise((r) => setTimeout(r, 20));
      }
      // nothing is added before the window closes
      expect(await windowed.queue.getJobs(['waiting'])).toHaveLength(0);
      await Promise.all(added);
      const jobs = await windowed.queue.getJobs(['waiting']);
      expect(jobs.map((j) => j.data as unknown)).toEqual([{ txIds: ids }]);
    } finally {
      await windowed.close();
    }
  });

  it("a batch carrying an update before its create: the create's publication follows the chain to the update, both in chain order", async () => {
    const { chain, created, updated } = await unqueuedCreateAndUpdate();
    await queue.queue.add(
      'publish',
      { txIds: [updated.txId, created.txId] },
      { jobId: `batch-${updated.txId}`, removeOnComplete: true, removeOnFail: true },
    );
    start(chain);
    await eventually(async () => (await store.state(updated.txId)) === 'published', 10_000);
    expect(chain.mine().txIds.slice(1)).toEqual([created.txId, updated.txId]);
    expect(chain.accepted.get(updated.txId)).toBe(1);
    await drained();
  });

  it('updates whose create is still being published are published right after it (the chain is followed), with no job of their own', async () => {
    const chain = new InMemoryChain();
    const holding = holdingOne(chain);
    const svc = service(chain);
    start(holding.publisher, { concurrency: 4 });
    const created = await svc.createLinked(tenant, { body: Buffer.from('a'), encode: undefined });
    holding.hold(created.txId);
    const first = await svc.updateLinked(tenant, created.txId, {
      body: Buffer.from('b'),
      encode: undefined,
      updateToken: created.updateToken,
    });
    const second = await svc.updateLinked(tenant, first.txId, {
      body: Buffer.from('c'),
      encode: undefined,
      updateToken: first.updateToken,
    });
    const updated = await svc.updateLinked(tenant, second.txId, {
      body: Buffer.from('d'),
      encode: undefined,
      updateToken: second.updateToken,
    });
    // the updates' own batch jobs saw their previous records unpublished and finished: no job carries them now;
    // its outbox entry is due for the sweeper again (the fallback; the sweeper is off here)
    const updateJobDone = async () =>
      (await queue.queue.getJobs(['waiting', 'active', 'delayed'])).every(
        (j) => !JSON.stringify(j.data).includes(updated.txId),
      );
    await eventually(updateJobDone, 5000);
    expect(await redis.zscore(recordsKeys(prefix).outbox, updated.txId)).toBe(String(clock.now().getTime()));
    expect(await store.state(updated.txId)).toBe('pending');
    holding.release();
    // published by the create's publication, which followed the chain to them
    await eventually(async () => (await store.state(updated.txId)) === 'published', 5000);
    expect(chain.mine().txIds.slice(1)).toEqual([created.txId, first.txId, second.txId, updated.txId]);
    await drained();
    for (const u of [first, second, updated]) expect(chain.accepted.get(u.txId)).toBe(1);
    expect(await store.outboxSize()).toBe(0);
  });

  it('a followed successor whose publication fails is made due for the sweeper at once, whatever deferred it', async () => {
    const { chain, created, updated } = await unqueuedCreateAndUpdate();
    // As when the update's batch job ran first (the create unpublished) and the producer's
    // deferral landed after it left the update to the sweeper: deferred a minute, no job.
    await store.deferSweep([updated.txId], new Date(clock.now().getTime() + SWEEP_DEFER_MS));
    let hiccups = 0;
    const publisher = start({
      submit: async (tx) => {
        if (tx.txId === updated.txId && hiccups++ === 0) throw new Error('ARC hiccup');
        return chain.submit(tx);
      },
    });
    // The follow reached the update and failed: it is due for the sweeper now, not in a minute.
    await followLeavesToSweeper(created.txId, updated.txId);
    clock.advance(6000);
    expect(await publisher.sweep()).toBe(1);
    await eventually(async () => (await store.state(updated.txId)) === 'published', 10_000);
    expect(hiccups).toBe(2);
  });

  it('a followed successor the follow cannot read is made due for the sweeper too', async () => {
    const { chain, created, updated } = await unqueuedCreateAndUpdate();
    await store.deferSweep([updated.txId], new Date(clock.now().getTime() + SWEEP_DEFER_MS));
    // Its raw transaction unreadable (as a half-moved slot read it before pipeline-ask.ts): 'unknown'.
    const tx = recordsKeys(prefix).tx(updated.txId);
    const raw = await redis.getBuffer(tx);
    await redis.del(tx);
    const publisher = start(chain);
    await followLeavesToSweeper(created.txId, updated.txId);
    // Readable again: the sweeper's job publishes it.
    await redis.set(tx, raw!);
    clock.advance(6000);
    expect(await publisher.sweep()).toBe(1);
    await eventually(async () => (await store.state(updated.txId)) === 'published', 10_000);
    await drained();
  });

  it('a chain follow that reaches its limit hands the rest on to a new job: the chain is published without the sweeper', async () => {
    const chain = new InMemoryChain();
    const holding = holdingOne(chain);
    const svc = service(chain);
    start(holding.publisher, { concurrency: 4, followMax: 2 });
    const created = await svc.createLinked(tenant, { body: Buffer.from('a'), encode: undefined });
    holding.hold(created.txId);
    const links = await extendChain(svc, created, 7);
    // every update's own batch saw its previous record unpublished and left it to the follow
    const carried = async () =>
      (await queue.queue.getJobs(['waiting', 'active', 'delayed'])).some((j) =>
        links.slice(1).some((l) => JSON.stringify(j.data).includes(l.txId)),
      );
    await eventually(async () => !(await carried()), 5000);
    holding.release();
    // followed two at a time, then handed on (the sweeper is off here)
    await eventually(
      async () => (await Promise.all(links.map((l) => store.state(l.txId)))).every((st) => st === 'published'),
      10_000,
    );
    expect(chain.mine().txIds.slice(1)).toEqual(links.map((l) => l.txId));
    await drained();
    for (const l of links) expect(chain.accepted.get(l.txId)).toBe(1);
    expect(await store.outboxSize()).toBe(0);
  });

  it('a waiting successor whose previous record no publisher carries (its job lost) is published by the sweeper, in chain order', async () => {
    const { chain, created, updated } = await unqueuedCreateAndUpdate();
    const publisher = start(chain);
    // only the update's batch arrives: it waits (nothing follows the chain to it: the create has no job)
    await queue.queue.add(
      'publish',
      { txIds: [updated.txId] },
      { jobId: `batch-${updated.txId}`, removeOnComplete: true, removeOnFail: true },
    );
    await drained();
    expect(await store.state(updated.txId)).toBe('pending');
    clock.advance(6000);
    expect(await publisher.sweep()).toBe(2);
    await eventually(async () => (await store.state(updated.txId)) === 'published', 10_000);
    expect(chain.mine().txIds.slice(1)).toEqual([created.txId, updated.txId]);
    expect(await store.outboxSize()).toBe(0);
    await drained();
  });

  it("a batch defers its records' sweep (onAdded): the sweeper leaves a queued backlog alone and finds what no job carries", async () => {
    const chain = new InMemoryChain();
    const deferring = new BullPublishQueue(connection, prefix, {
      onAdded: (txIds) => store.deferSweep(txIds, new Date(clock.now().getTime() + SWEEP_DEFER_MS)),
    });
    const lost: PublishQueue = { enqueue: async () => undefined };
    try {
      const orphan = await service(chain, lost).writeIndependent(tenant, {
        body: Buffer.from('orphan'),
        encode: undefined,
      });
      const queued = await service(chain, deferring).writeIndependent(tenant, {
        body: Buffer.from('queued'),
        encode: undefined,
      });
      // The write does not wait for its batch: once the batch is added, onAdded defers the sweep.
      const deferred = async (txId: string) =>
        Number(await redis.zscore(recordsKeys(prefix).outbox, txId)) > clock.now().getTime();
      await eventually(() => deferred(queued.txId), 5000);
      const publisher = start(chain);
      await publisher.worker.pause(true);
      clock.advance(6000);
      // only the orphan is due: the queued record's batch job carries it
      expect(await publisher.sweep()).toBe(1);
      publisher.worker.resume();
      await eventually(
        async () =>
          (await store.state(orphan.txId)) === 'published' && (await store.state(queued.txId)) === 'published',
        10_000,
      );
      await drained();
      expect(chain.accepted.get(orphan.txId)).toBe(1);
      expect(chain.accepted.get(queued.txId)).toBe(1);
      expect(await store.outboxSize()).toBe(0);
      // A batch still unpublished SWEEP_DEFER_MS later is swept like any other entry. Its job is
      // held in a worker whose submit hangs: the record stays pending whatever the timing.
      for (const p of running.splice(0)) await p.close();
      let release: () => void = () => undefined;
      const held = new Promise<void>((r) => {
        release = r;
      });
      const stuck = start({ submit: async (tx) => held.then(() => chain.submit(tx)) });
      const late = await service(chain, deferring).writeIndependent(tenant, {
        body: Buffer.from('late'),
        encode: undefined,
      });
      await eventually(() => deferred(late.txId), 5000);
      clock.advance(SWEEP_DEFER_MS + 6000);
      expect(await stuck.sweep()).toBe(1);
      release();
      await eventually(async () => (await store.state(late.txId)) === 'published', 10_000);
      await drained();
      expect(chain.accepted.get(late.txId)).toBe(1);
    } finally {
      await deferring.close();
    }
  });

  it("caps the queue's events stream (nothing reads it) near PUBLISH_EVENTS_MAX_LEN", async () => {
    const own = uniquePrefix('pubevents');
    const capped = new BullPublishQueue(connection, own);
    try {
      const ids = Array.from({ length: 3 * PUBLISH_EVENTS_MAX_LEN }, (_, i) => i.toString(16).padStart(64, '0'));
      for (let i = 0; i < ids.length; i += 500) await capped.enqueueMany(ids.slice(i, i + 500));
      const events = `${bullPrefix(own, QUEUES.recordsPublish)}:${QUEUES.recordsPublish}:events`;
      const length = await redis.xlen(events);
      expect(length).toBeGreaterThan(0);
      // XADD MAXLEN ~ trims whole stream nodes (100 entries): a little above the cap, never 3x
      expect(length).toBeLessThanOrEqual(PUBLISH_EVENTS_MAX_LEN + 200);
      expect(
        await redis.hget(
          `${bullPrefix(own, QUEUES.recordsPublish)}:${QUEUES.recordsPublish}:meta`,
          'opts.maxLenEvents',
        ),
      ).toBe(String(PUBLISH_EVENTS_MAX_LEN));
    } finally {
      await capped.queue.obliterate({ force: true });
      await capped.close();
    }
  });
});
