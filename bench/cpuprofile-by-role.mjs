#!/usr/bin/env node
/**
 * Where one role's CPU went under `npm run bench:cpu`, per record, from the launcher's profiles:
 *
 *   PROFILE_APPS=all PROFILE_DIR=/tmp/p1 npm run bench:cpu | tee /tmp/p1.txt
 *   node bench/cpuprofile-by-role.mjs worker /tmp/p1.txt:/tmp/p1 [more runs] [-- runs to compare]
 *
 * Each run is `<bench:cpu output>:<its PROFILE_DIR>`. The role (`api`, `worker`, `devnet`) picks
 * that run's processes by command line; every profile is cut to the run's "profile window" (the
 * ten seconds the CPU figures are about) and its self time is scaled so that it adds up to the
 * role's CPU per record that the run measured from /proc: a sampling profile on a busy machine
 * charges a process for the time it waits to be scheduled, the /proc figure does not. Frames in a
 * bundle (dist/apps/<app>/main.js) are named by their source file (esbuild's `// libs/…` markers).
 * Several runs are averaged; after `--`, a second set is averaged too and the table shows both
 * and the difference, largest first. BY=module (default function) sums by source file or package.
 * TOP (default 40) rows.
 */
import fs from 'node:fs';
import path from 'node:path';

const [role, ...rest] = process.argv.slice(2);
const cut = rest.indexOf('--');
const sets = cut < 0 ? [rest] : [rest.slice(0, cut), rest.slice(cut + 1)];
const byModule = process.env.BY === 'module';
const top = Number(process.env.TOP ?? 40);
const ROLE_LABEL = { api: 'api', worker: 'workers', devnet: 'devnet node \\+ its redis' };
if (!ROLE_LABEL[role] || sets.some((s) => s.length === 0)) {
  process.stderr.write('usage: cpuprofile-by-role.mjs api|worker|devnet <output>:<dir> ... [-- <output>:<dir> ...]\n');
  process.exit(2);
}

/** Source file of each line of a bundle, from esbuild's `// libs/x/src/y.ts` markers. */
const sourcesOf = new Map();
function sourceAt(bundle, line) {
  if (!sourcesOf.has(bundle)) {
    const lines = fs.existsSync(bundle) ? fs.readFileSync(bundle, 'utf8').split('\n') : [];
    const at = [];
    let current = '(bundle)';
    lines.forEach((text, i) => {
      const m = /^\/\/ ((?:libs|apps)\/\S+\.ts)$/.exec(text);
      if (m) current = m[1];
      at[i + 1] = current;
    });
    sourcesOf.set(bundle, at);
  }
  return sourcesOf.get(bundle)[line] ?? '(bundle)';
}

/** A frame's name: source file (and function) for bundle frames, package or Node module otherwise. */
function frameKey(frame) {
  const fn = frame.functionName || '(anonymous)';
  const url = frame.url.replace(/^file:\/\//, '');
  if (/\/dist\/apps\/[^/]+\/main\.js$/.test(url)) {
    const source = sourceAt(url, frame.lineNumber + 1);
    return byModule ? source : `${source} ${fn}`;
  }
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)(\/.*)?$/.exec(url);
  if (pkg) return byModule ? pkg[1] : `${pkg[1]}${pkg[2] ?? ''} ${fn}`;
  return byModule ? url || fn : `${url} ${fn}`.trim();
}

/** Self µs per record by key for one run, scaled to the role's measured CPU per record. */
function readRun(spec) {
  const at = spec.lastIndexOf(':');
  const [outFile, dir] = [spec.slice(0, at), spec.slice(at + 1)];
  const out = fs.readFileSync(outFile, 'utf8');
  const window = /profile window: ([\d.]+) ([\d.]+)/.exec(out);
  const cpu = new RegExp(`${ROLE_LABEL[role]} ([\\d.]+)`).exec(out);
  if (!window || !cpu) throw new Error(`${outFile}: no profile window or CPU per record (run with PROFILE_APPS)`);
  const [from, to] = [Number(window[1]) * 1e6, Number(window[2]) * 1e6];
  const pids = [...out.matchAll(/^load +[\d.]+ s (\d+) +(.*)$/gm)]
    .filter(([, , cmd]) => cmd.includes(`/apps/${role}/`))
    .map(([, pid]) => pid);
  const self = new Map();
  let busy = 0;
  for (const file of fs.readdirSync(dir).filter((f) => pids.some((pid) => f.includes(`.${pid}.`)))) {
    const profile = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8'));
    const frames = new Map(profile.nodes.map((n) => [n.id, n.callFrame]));
    let t = profile.startTime;
    profile.samples.forEach((id, i) => {
      t += profile.timeDeltas[i];
      const frame = frames.get(id);
      if (t < from || t > to || frame.functionName === '(idle)') return;
      const dt = profile.timeDeltas[i + 1] ?? 0;
      const key = frameKey(frame);
      self.set(key, (self.get(key) ?? 0) + dt);
      busy += dt;
    });
  }
  if (busy === 0) throw new Error(`${spec}: no ${role} samples in the window`);
  const scale = (Number(cpu[1]) * 1000) / busy;
  return { cpu: Number(cpu[1]) * 1000, self: new Map([...self].map(([k, v]) => [k, v * scale])) };
}

function average(specs) {
  const runs = specs.map(readRun);
  const self = new Map();
  for (const run of runs) for (const [k, v] of run.self) self.set(k, (self.get(k) ?? 0) + v / runs.length);
  return { cpu: runs.reduce((n, r) => n + r.cpu, 0) / runs.length, self };
}

const [a, b] = sets.map(average);
const fmt = (v) => v.toFixed(1).padStart(7);
if (!b) {
  console.log(`${role}: ${a.cpu.toFixed(0)} µs of CPU per record; self time per record (µs):`);
  for (const [k, v] of [...a.self].sort((x, y) => y[1] - x[1]).slice(0, top)) console.log(`${fmt(v)}  ${k}`);
} else {
  console.log(`${role}: ${a.cpu.toFixed(0)} -> ${b.cpu.toFixed(0)} µs of CPU per record; self time per record (µs):`);
  const keys = [...new Set([...a.self.keys(), ...b.self.keys()])];
  const rows = keys.map((k) => [k, a.self.get(k) ?? 0, b.self.get(k) ?? 0]);
  rows.sort((x, y) => Math.abs(y[2] - y[1]) - Math.abs(x[2] - x[1]));
  for (const [k, x, y] of rows.slice(0, top)) console.log(`${fmt(x)} ${fmt(y)} ${fmt(y - x)}  ${k}`);
}
