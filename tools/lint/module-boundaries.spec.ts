/**
 * Proves the architecture rules are enforced, not decorative: ESLint with the repository's
 * config must reject an I/O import in a domain lib and @bsv/sdk outside the chain libs.
 * (Needs the Nx project graph, which `npm run lint` computes first.)
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';

const root = path.resolve(__dirname, '../..');

describe('module boundaries', () => {
  beforeAll(() => {
    execFileSync(path.join(root, 'node_modules/.bin/nx'), ['show', 'projects'], {
      cwd: root,
      env: { ...process.env, NX_DAEMON: 'false', NX_NO_CLOUD: 'true', NX_TUI: 'false' },
      stdio: 'ignore',
    });
  });

  // ESLint runs as a child process: its flat config is ESM, which jest's CommonJS runtime cannot load.
  async function messages(file: string, code: string): Promise<string[]> {
    let out: string;
    try {
      out = execFileSync(
        path.join(root, 'node_modules/.bin/eslint'),
        ['--stdin', '--stdin-filename', path.join(root, file), '--format', 'json'],
        {
          cwd: root,
          input: code,
          encoding: 'utf8',
        },
      );
    } catch (e) {
      out = (e as { stdout: string }).stdout;
    }
    const [result] = JSON.parse(out) as { messages: { ruleId: string | null; message: string }[] }[];
    return (result?.messages ?? []).filter((m) => m.ruleId === '@nx/enforce-module-boundaries').map((m) => m.message);
  }

  it.each(['express', 'ioredis', 'bullmq', 'redis-om', '@bsv/sdk'])('a domain lib may not import %s', async (pkg) => {
    const found = await messages('libs/records/domain/src/probe.ts', `import x from '${pkg}';\nexport const y = x;\n`);
    expect(found.join('\n')).toMatch(/not allowed to import/);
  });

  it('only chain libs import @bsv/sdk', async () => {
    expect(
      await messages(
        'libs/records/data-access/src/probe.ts',
        `import { Transaction } from '@bsv/sdk';\nexport const t = Transaction;\n`,
      ),
    ).not.toEqual([]);
    expect(
      await messages(
        'libs/chain/bsv/src/probe.ts',
        `import { Transaction } from '@bsv/sdk';\nexport const t = Transaction;\n`,
      ),
    ).toEqual([]);
  });

  it('a shared lib may not depend on a feature scope', async () => {
    const found = await messages(
      'libs/shared/http/src/probe.ts',
      `import { x } from '@proofline/identity-domain';\nexport const y = x;\n`,
    );
    expect(found.length).toBeGreaterThan(0);
  });
});
