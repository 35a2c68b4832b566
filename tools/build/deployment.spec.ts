/**
 * The deployment files, checked by reading them (no Docker engine on the test machine): the
 * image's multi-stage layout, compose's services and entry points, and a `.env.example` that
 * lists every variable the configuration or the documentation knows, so none is silently dropped.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';

const ROOT = path.resolve(__dirname, '../..');
const read = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8');

/** The page whose variables table documents every variable of the configuration. */
const CONFIGURATION_DOC = 'docs/configuration.md';

/** The variables the configuration reads (its slices declare them, libs/shared/config). */
async function configVariables(): Promise<string[]> {
  const { CONFIG_VARIABLES } = await import('@proofline/shared-config');
  return CONFIG_VARIABLES.map((v) => v.name);
}

/** Variables named in the first column of the table under `## Variables` in the configuration page. */
function documentedVariables(): string[] {
  const doc = read(CONFIGURATION_DOC);
  const start = doc.indexOf('\n## Variables\n');
  expect(start).toBeGreaterThanOrEqual(0);
  const end = doc.indexOf('\n## ', start + 1);
  const section = doc.slice(start, end === -1 ? undefined : end);
  return [...section.matchAll(/^\| ([^|]+)\|/gm)].flatMap((m) =>
    [...(m[1] ?? '').matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((v) => v[1] ?? ''),
  );
}

function exampleVariables(): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of read('.env.example').matchAll(/^#? ?([A-Z][A-Z0-9_]+)=(.*)$/gm)) out.set(m[1] ?? '', m[2] ?? '');
  return out;
}

interface ComposeService {
  command?: string[];
  env_file?: { path: string; required?: boolean }[];
  environment?: Record<string, string>;
  healthcheck?: { test?: string[]; disable?: boolean };
  stop_grace_period?: string;
  deploy?: { replicas?: unknown };
}

describe('.env.example', () => {
  it('lists every configuration variable and every variable of the documented table', async () => {
    const example = exampleVariables();
    const config = await configVariables();
    expect(config.length).toBeGreaterThan(20);
    expect(config).toContain('AUTH_JWT_SECRET');
    expect(config.filter((v) => !example.has(v))).toEqual([]);
    const documented = documentedVariables();
    expect(documented.filter((v) => !example.has(v))).toEqual([]);
  });

  it('shows the defaults the configuration applies', async () => {
    const { loadConfig } = await import('@proofline/shared-config');
    const example = exampleVariables();
    const defaults = loadConfig({});
    expect(example.get('PORT')).toBe(String(defaults.port));
    expect(example.get('SHUTDOWN_GRACE_MS')).toBe(String(defaults.shutdownGraceMs));
    expect(example.get('MAX_RECORD_BYTES')).toBe(String(defaults.maxRecordBytes));
    expect(example.get('REDIS_URL')).toBe(defaults.redisUrl);
    // Production needs a token secret: the example leaves it for the operator to fill.
    expect(example.get('NODE_ENV')).toBe('production');
    expect(example.get('AUTH_JWT_SECRET')).toBe('');
  });
});

describe(CONFIGURATION_DOC, () => {
  it('documents every configuration variable in its variables table', async () => {
    const documented = documentedVariables();
    expect((await configVariables()).filter((v) => !documented.includes(v))).toEqual([]);
  });
});

describe('docker-compose.yml', () => {
  const compose = parse(read('docker-compose.yml'), { merge: true }) as { services: Record<string, ComposeService> };
  const apps = ['api', 'graphql', 'worker', 'devnet'];

  it('runs every app as node on its compiled bundle, with every variable of .env', () => {
    for (const name of apps) {
      const svc = compose.services[name];
      expect(svc?.command).toEqual(['node', `dist/apps/${name}/main.js`]);
      expect(svc?.env_file).toEqual([{ path: '.env', required: true }]);
      // `environment` only fixes the container layout; it is no allowlist.
      expect(Object.keys(svc?.environment ?? {}).sort()).toEqual(
        expect.arrayContaining(['REDIS_URL', 'PORT', 'GRAPHQL_PORT']),
      );
      expect(Object.keys(svc?.environment ?? {}).length).toBeLessThanOrEqual(9);
      // Docker's SIGKILL comes after SHUTDOWN_GRACE_MS (10 s by default).
      expect(parseInt(svc?.stop_grace_period ?? '0', 10)).toBeGreaterThan(10);
    }
    for (const name of ['api', 'graphql', 'worker'])
      expect(fs.existsSync(path.join(ROOT, 'apps', name, 'src', 'main.ts'))).toBe(true);
    expect(compose.services['worker']?.deploy?.replicas).toBeDefined();
  });

  it('runs Redis with AOF and noeviction', () => {
    const command = (compose.services['redis'] as { command: string[] }).command.join(' ');
    expect(command).toContain('--appendonly yes');
    expect(command).toContain('--maxmemory-policy noeviction');
  });

  it('profile cluster: three masters (AOF, noeviction, each announcing its service name) made a cluster by a one-shot service', () => {
    type Svc = ComposeService & { profiles?: string[]; volumes?: string[]; depends_on?: Record<string, unknown> };
    const services = compose.services as Record<string, Svc>;
    const nodes = ['redis-node-1', 'redis-node-2', 'redis-node-3'];
    for (const name of nodes) {
      const svc = services[name];
      expect(svc?.profiles).toEqual(['cluster']);
      const command = (svc?.command ?? []).join(' ');
      for (const option of [
        '--appendonly yes',
        '--maxmemory-policy noeviction',
        '--cluster-enabled yes',
        `--cluster-announce-hostname ${name}`,
        '--cluster-preferred-endpoint-type hostname',
      ])
        expect(command).toContain(option);
      expect(svc?.volumes?.[0]).toMatch(new RegExp(`^${name}-data:/data$`));
    }
    const init = services['redis-cluster-init'];
    expect(init?.profiles).toEqual(['cluster']);
    expect(Object.keys(init?.depends_on ?? {}).sort()).toEqual(nodes);
    const script = (init?.command ?? []).join('\n');
    expect(script).toContain('--cluster create');
    expect(script).toContain('--cluster-replicas 0');
    for (const name of nodes) expect(script).toContain(name);
    // The default deployment is untouched: no app needs the profile.
    for (const name of apps) expect(services[name]?.profiles).toBeUndefined();
    expect(services['redis']?.profiles).toBeUndefined();
  });
});

describe('Dockerfile', () => {
  const dockerfile = read('Dockerfile');
  const stages = dockerfile.split(/^FROM /m).slice(1);

  it('builds with dev dependencies and runs the output with production dependencies only, as node under tini', () => {
    expect(stages).toHaveLength(2);
    const [build = '', runtime = ''] = stages;
    expect(build).toMatch(/^node:24-bookworm-slim AS build/);
    expect(build).toMatch(/^RUN npm ci\b/m);
    expect(build).toMatch(/^RUN npm run build$/m);
    expect(runtime).toMatch(/^node:24-bookworm-slim AS runtime/);
    expect(runtime).toMatch(/^RUN npm ci --omit=dev\b/m);
    expect(runtime).toMatch(/^COPY --from=build \/app\/dist \.\/dist$/m);
    expect(runtime).not.toMatch(/^COPY (apps|libs)\b/m);
    expect(runtime).toMatch(/^USER node$/m);
    expect(runtime).toMatch(/^HEALTHCHECK .*\\\n\s+CMD \["node", "-e", .*\/liveness|HEALTHCHECK_URL/m);
    expect(runtime).toMatch(/^ENTRYPOINT \["\/usr\/bin\/tini", "--"\]$/m);
    expect(runtime).toMatch(/^CMD \["node", "dist\/apps\/api\/main\.js"\]$/m);
    expect(dockerfile).not.toMatch(/tsx|npm start|npm run start/);
  });

  it('keeps tsx and the bundler out of the production dependencies', () => {
    const pkg = JSON.parse(read('package.json')) as {
      dependencies: Record<string, string>;
      devDependencies: Record<string, string>;
    };
    expect(pkg.dependencies['tsx']).toBeUndefined();
    expect(pkg.dependencies['esbuild']).toBeUndefined();
    expect(pkg.devDependencies['tsx']).toBeDefined();
    expect(pkg.devDependencies['esbuild']).toBeDefined();
  });
});
