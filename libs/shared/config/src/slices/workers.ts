import { intFrom } from '../parsers';
import { slice, variable } from '../variable';

/** The worker processes: how many `npm start` forks and how much each runs at once. */
export const workers = slice({
  workers: variable('WORKERS', 'Worker processes `npm start` forks.', intFrom(0, 64).default(1)),
  workerConcurrency: variable(
    'WORKER_CONCURRENCY',
    'Jobs a worker process runs at once per queue.',
    intFrom(1, 1000).default(16),
  ),
});
