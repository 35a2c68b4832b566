// Preloaded (`node --import`) into each process `write-path.ts` measures: V8 precise coverage with
// call counts from the first line of the app. Every SIGUSR2 takes the coverage (which resets the
// counters) and writes it to `${WRITE_PATH_COVERAGE}.<n>.json`, n = 0, 1, …: the measuring script
// signals once to open a window and once to close it, so a file holds only what ran in between.
import fs from 'node:fs';
import inspector from 'node:inspector';

const out = process.env.WRITE_PATH_COVERAGE;
if (out) {
  const session = new inspector.Session();
  session.connect();
  const post = (method, params = {}) =>
    new Promise((resolve, reject) => session.post(method, params, (err, res) => (err ? reject(err) : resolve(res))));
  await post('Profiler.enable');
  await post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });
  let n = 0;
  process.on('SIGUSR2', () => {
    const file = `${out}.${n++}.json`;
    void post('Profiler.takePreciseCoverage').then((r) => fs.writeFileSync(file, JSON.stringify(r.result)));
  });
}
