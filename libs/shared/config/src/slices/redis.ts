import { z } from 'zod';
import { intFrom, redisNatMap, redisNodeList, redisUrl } from '../parsers';
import { slice, variable } from '../variable';

export const REDIS_URL = variable(
  'REDIS_URL',
  'The Redis every process shares: one server, or any node of a Redis Cluster (detected); its user, password and TLS apply to every node.',
  redisUrl.default('redis://127.0.0.1:6379'),
);

/** The cluster's nodes by name; also read for the devnet node's Redis when it is the service's. */
export const REDIS_CLUSTER_NODES = variable(
  'REDIS_CLUSTER_NODES',
  'Redis Cluster nodes to start from (host:port,...): the service runs on a cluster without asking REDIS_URL whether it is one.',
  redisNodeList,
);

/** Address translation of a cluster behind NAT or in containers (docs/redis-cluster.md). */
export const REDIS_CLUSTER_NAT_MAP = variable(
  'REDIS_CLUSTER_NAT_MAP',
  'Redis Cluster behind NAT or in containers: announced-host:port=reachable-host:port,... for each node.',
  redisNatMap,
);

export const redis = slice({
  redisUrl: REDIS_URL,
  redisCluster: {
    nodes: REDIS_CLUSTER_NODES,
    natMap: REDIS_CLUSTER_NAT_MAP,
  },
  redisPrefix: variable(
    'REDIS_PREFIX',
    'Prefix of every Redis key (several deployments can share one Redis).',
    z
      .string()
      .regex(/^[A-Za-z0-9_-]{1,32}$/, 'must be 1-32 characters of A-Z a-z 0-9 _ -')
      .default('proofline'),
  ),
  redisPartitions: variable(
    'REDIS_PARTITIONS',
    'Number of records partitions (hash tags by slot range: records, chains, outbox and a funding-pool shard each); spreads the write path over the masters of a Redis Cluster. Unset: automatic (the layout the Redis already holds, else 64 on a cluster and 1 on one Redis).',
    intFrom(1, 1024).optional(),
  ),
  redisCommandTimeoutMs: variable(
    'REDIS_COMMAND_TIMEOUT_MS',
    'Bound of every request-path Redis command (a frozen Redis answers 503 after it).',
    intFrom(100, 60_000).default(1000),
  ),
});
