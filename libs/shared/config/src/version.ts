import fs from 'node:fs';
import path from 'node:path';

function readVersion(): string {
  try {
    const file = path.resolve(__dirname, '../../../../package.json');
    const pkg = JSON.parse(fs.readFileSync(file, 'utf8')) as { version?: unknown };
    return typeof pkg.version === 'string' ? pkg.version : 'unknown';
  } catch {
    return 'unknown';
  }
}

/** The release version reported by `/readiness` and logs (the root package.json's). */
export const APP_VERSION: string = readVersion();
