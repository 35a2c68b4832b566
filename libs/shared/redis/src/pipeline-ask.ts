import { Pipeline, ReplyError } from 'ioredis';

/**
 * What ioredis keeps of a pipeline while its replies arrive (ioredis 5, `built/Pipeline.js`):
 * `fillResult` is called once per reply and decides, at the last one, whether a cluster pipeline
 * is sent again after a redirection.
 */
interface PipelineInternals {
  readonly isCluster: boolean;
  readonly replyPending: number;
  readonly _queue: readonly { readonly name: string; readonly ignore?: boolean; readonly inTransaction?: boolean }[];
  readonly _result: ([Error | null, unknown?] | undefined)[];
  fillResult(value: [Error | null, unknown?], position: number): void;
}

let installed = false;

/**
 * Makes a cluster pipeline that met a slot half migrated wait for the migration, as a multi-key
 * command does, instead of reading keys that are not there.
 *
 * While a slot migrates (resharding: `CLUSTER SETSLOT MIGRATING`, `MIGRATE` key by key), its source
 * answers a command on a key it still holds and ASK for a key it no longer holds (or never held).
 * ioredis sends a pipeline whose replies are all ASK, or ASK and answers of read-only commands,
 * again WHOLE to the target with ASKING before each command. The target answers the keys that have
 * not moved yet as absent: a pipeline reading a record's hash and its (absent) extension key, or
 * an auto-pipeline of several records' reads, gives nil for records that exist, and a publisher
 * took such a record for unknown and left it to the outbox sweeper a minute later.
 *
 * Installed, a cluster pipeline whose replies mix ASK and answers is answered TRYAGAIN in place of
 * each ASK: ioredis sends it again to the slot's owner after `retryDelayOnTryAgain` (a pipeline
 * of read-only commands) until its keys are all on one side, or the slot has moved (MOVED: to the
 * new owner), within the client's redirection bound; a pipeline with a write fails its ASK'd
 * commands with TRYAGAIN (retryable: a 503 on the request path, a job retry in a worker) where
 * ioredis failed them with ASK. A pipeline answered ASK throughout is resent with ASKING, as before
 * (its every key is on the target). Transactions (MULTI/EXEC) are left as they are.
 *
 * Idempotent; {@link connectRedis} installs it before opening a cluster client.
 */
export function waitOutMigrationsInPipelines(): void {
  if (installed) return;
  installed = true;
  const proto = Pipeline.prototype as unknown as PipelineInternals;
  const fillResult = proto.fillResult;
  // Internals of the pinned ioredis (package.json); an upgrade that renames them fails here, at
  // the first cluster client, and pipeline-ask.spec.ts fails if their meaning changes.
  if (typeof fillResult !== 'function' || fillResult.length !== 2)
    throw new Error('ioredis Pipeline.fillResult(value, position) not found: see pipeline-ask.ts');
  proto.fillResult = function (this: PipelineInternals, value, position) {
    if (this.isCluster && this.replyPending === 1) askAmongAnswersIsTryAgain(this, value, position);
    fillResult.call(this, value, position);
  };
}

const isAsk = (e: Error | null | undefined): e is Error =>
  typeof e?.message === 'string' && e.message.startsWith('ASK ');

/** At the last reply of a cluster pipeline: ASK among answers becomes TRYAGAIN (in `_result` and `value`). */
function askAmongAnswersIsTryAgain(p: PipelineInternals, value: [Error | null, unknown?], position: number): void {
  let asked = false;
  let answered = false;
  for (let i = 0; i < p._queue.length; i += 1) {
    const command = p._queue[i]!;
    if (command.ignore || command.name === 'asking') continue;
    if (command.inTransaction || command.name === 'multi' || command.name === 'exec') return;
    const error = (i === position ? value : p._result[i])?.[0];
    if (isAsk(error)) asked = true;
    else if (!error) answered = true;
  }
  if (!asked || !answered) return;
  const tryAgain = (ask: Error): Error =>
    new ReplyError(`TRYAGAIN pipeline met a slot half migrated (${ask.message})`) as Error;
  for (let i = 0; i < p._queue.length; i += 1) {
    const reply = i === position ? value : p._result[i];
    if (reply && isAsk(reply[0])) reply[0] = tryAgain(reply[0]);
  }
}
