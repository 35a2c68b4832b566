/**
 * `npm run blackbox`: the black-box check of a running deployment, over HTTP only.
 *
 *   npm run blackbox -- --url http://127.0.0.1:3000 --graphql http://127.0.0.1:4000 \
 *     --headers http://127.0.0.1:9090 --key idty_…
 *
 * Every option also reads an environment variable (the flag wins):
 *   --url              BLACKBOX_URL            REST base URL (default http://127.0.0.1:3000)
 *   --graphql          BLACKBOX_GRAPHQL_URL    GraphQL base URL (default http://127.0.0.1:4000)
 *   --headers          BLACKBOX_HEADERS_URL    WhatsOnChain-compatible headers source, the
 *                                              deployment's HEADERS_URL (default http://127.0.0.1:9090,
 *                                              the devnet node of `npm start`)
 *   --key              BLACKBOX_API_KEY        a key with Issuer_Admin and Verifier_Admin (required)
 *   --proof-timeout-ms BLACKBOX_PROOF_TIMEOUT_MS  how long records may take to be proven (180000)
 *   --wait-ms          BLACKBOX_WAIT_MS        readiness and "retry later" answers (30000)
 *   --max-limit-keys   BLACKBOX_MAX_LIMIT_KEYS checks the key limit only when at most this many
 *                                              keys are free (10)
 *   AUTH_JWT_SECRET (and AUTH_JWT_ISSUER, AUTH_JWT_AUDIENCE, AUTH_CLAIMS_FIELD): the deployment's,
 *   to sign the claims endpoint's token; environment only, so the secret never shows in `ps`.
 *
 * Prints one line per check and exits 0 when none failed, 1 when one failed, 2 on bad options.
 * `--json` prints the results as one JSON document instead.
 */
import { runBlackbox } from './checks';
import type { BlackboxOptions, CheckResult } from './checks';

function parseArgs(argv: string[]): Map<string, string> {
  const args = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (!arg.startsWith('--')) throw new Error(`unexpected argument ${arg}`);
    const eq = arg.indexOf('=');
    if (eq > 0) args.set(arg.slice(2, eq), arg.slice(eq + 1));
    else if (arg === '--json') args.set('json', 'true');
    else {
      const value = argv[++i];
      if (value === undefined) throw new Error(`${arg} needs a value`);
      args.set(arg.slice(2), value);
    }
  }
  return args;
}

const KNOWN = ['url', 'graphql', 'headers', 'key', 'proof-timeout-ms', 'wait-ms', 'max-limit-keys', 'json'];

function options(args: Map<string, string>, env: NodeJS.ProcessEnv): BlackboxOptions {
  for (const name of args.keys()) if (!KNOWN.includes(name)) throw new Error(`unknown option --${name}`);
  const pick = (flag: string, variable: string, dflt?: string) => args.get(flag) ?? env[variable] ?? dflt;
  const int = (flag: string, variable: string, dflt: number) => {
    const value = Number(pick(flag, variable, String(dflt)));
    if (!Number.isInteger(value) || value < 0) throw new Error(`--${flag} (${variable}) must be a whole number`);
    return value;
  };
  const key = pick('key', 'BLACKBOX_API_KEY');
  if (!key) throw new Error('--key (BLACKBOX_API_KEY) is required: a key with Issuer_Admin and Verifier_Admin');
  return {
    url: pick('url', 'BLACKBOX_URL', 'http://127.0.0.1:3000') as string,
    graphql: pick('graphql', 'BLACKBOX_GRAPHQL_URL', 'http://127.0.0.1:4000') as string,
    headers: pick('headers', 'BLACKBOX_HEADERS_URL', 'http://127.0.0.1:9090') as string,
    key,
    jwtSecret: env['AUTH_JWT_SECRET'] || undefined,
    jwtIssuer: env['AUTH_JWT_ISSUER'] || undefined,
    jwtAudience: env['AUTH_JWT_AUDIENCE'] || undefined,
    claimsField: env['AUTH_CLAIMS_FIELD'] || undefined,
    proofTimeoutMs: int('proof-timeout-ms', 'BLACKBOX_PROOF_TIMEOUT_MS', 180_000),
    waitMs: int('wait-ms', 'BLACKBOX_WAIT_MS', 30_000),
    maxLimitKeys: int('max-limit-keys', 'BLACKBOX_MAX_LIMIT_KEYS', 10),
  };
}

async function main(): Promise<number> {
  let args: Map<string, string>;
  let o: BlackboxOptions;
  try {
    args = parseArgs(process.argv.slice(2));
    o = options(args, process.env);
  } catch (e) {
    process.stderr.write(`blackbox: ${(e as Error).message}\n`);
    return 2;
  }
  const json = args.has('json');
  const started = Date.now();
  const line = (r: CheckResult) => {
    if (json) return;
    const mark = r.outcome === 'ok' ? 'ok  ' : r.outcome === 'skipped' ? 'skip' : 'FAIL';
    process.stdout.write(`${mark} ${r.name} (${r.ms} ms)${r.detail ? `\n     ${r.detail}` : ''}\n`);
  };
  if (!json) process.stdout.write(`blackbox: ${o.url} (GraphQL ${o.graphql}, headers ${o.headers})\n`);
  const { results, retries } = await runBlackbox(o, line);
  const count = (outcome: CheckResult['outcome']) => results.filter((r) => r.outcome === outcome).length;
  const ms = Date.now() - started;
  if (json) process.stdout.write(`${JSON.stringify({ results, retries, ms })}\n`);
  else
    process.stdout.write(
      `blackbox: ${count('ok')} ok, ${count('failed')} failed, ${count('skipped')} skipped in ${(ms / 1000).toFixed(1)} s` +
        (Object.keys(retries).length ? `; answers retried after Retry-After: ${JSON.stringify(retries)}` : '') +
        '\n',
    );
  return count('failed') > 0 ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    process.stderr.write(`blackbox: ${(e as Error).stack ?? String(e)}\n`);
    process.exit(1);
  },
);
