// The framework's ceiling: Express 5 (the project's own copy) with a raw body parser and one
// route answering a small JSON, nothing else. PORT from the environment; bound to 127.0.0.1.
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const express = createRequire(path.join(root, 'package.json'))('express');

const app = express();
app.post('/w', express.raw({ type: () => true, limit: '2mb' }), (req, res) => {
  res.json({ ok: true, n: Buffer.isBuffer(req.body) ? req.body.length : 0 });
});
app.listen(Number(process.env.PORT), '127.0.0.1');
