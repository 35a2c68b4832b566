// Test code, not a spec: app processes started as `npm start` starts them, for the specs that race
// or crash real processes (apps/api/src/multiprocess).
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import { eventually } from '@proofline/shared-testing';

const ROOT = path.resolve(__dirname, '../../../..');

/**
 * App processes (`node --import tsx <entry>` from the repository root) with the environment
 * `env()` gives at start (read then, so it may name a devnet started in `beforeAll`), stdout
 * ignored and the first 4,000 characters of their stderr kept: a process that refuses its
 * configuration exits at once, and its stderr is the failure message.
 */
export class SpawnedApps {
  readonly children: ChildProcess[] = [];
  private errText = '';

  constructor(private readonly env: () => Record<string, string>) {}

  /** Starts `entry` (a path from the repository root) with `env` over the common environment. */
  start(entry: string, env: Record<string, string> = {}): ChildProcess {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, entry)], {
      cwd: ROOT,
      env: { ...process.env, ...this.env(), ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      if (this.errText.length < 4000) this.errText += chunk.toString();
    });
    this.children.push(child);
    return child;
  }

  /** What the processes wrote to stderr (the first 4,000 characters). */
  get stderr(): string {
    return this.errText;
  }

  /** Waits until every API at `bases` answers readiness 200; throws, with the stderr, when a process exits first. */
  async ready(bases: readonly string[], timeoutMs = 60_000): Promise<void> {
    for (const base of bases) {
      const state = await eventually(
        async () =>
          this.children.some((c) => c.exitCode !== null)
            ? 'exited'
            : (await fetch(`${base}/readiness`)).status === 200 && 'ready',
        timeoutMs,
        200,
      );
      if (state === 'exited') throw new Error(`a process exited while starting: ${this.errText}`);
    }
  }

  /** SIGTERMs every process still running and waits for all of them to exit. */
  async stop(): Promise<void> {
    await Promise.all(
      this.children.map(
        (c) =>
          new Promise<void>((resolve) => {
            if (c.exitCode !== null || c.signalCode !== null) return resolve();
            c.once('exit', () => resolve());
            c.kill('SIGTERM');
          }),
      ),
    );
  }
}
