/**
 * The documentation's relative links: every link of the README, the docs/ pages and the apps' and
 * libs' READMEs to a file in the repository MUST name a file that exists, and a `#fragment` MUST
 * name a heading of that page (GitHub's anchor for it). Pages move and sections are renamed; a link
 * left behind should fail here rather than on a reader.
 */
import fs from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');

function markdownFiles(): string[] {
  const out = ['README.md'];
  for (const file of fs.readdirSync(path.join(ROOT, 'docs'))) if (file.endsWith('.md')) out.push(`docs/${file}`);
  const walk = (dir: string): void => {
    for (const entry of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
      const rel = `${dir}/${entry.name}`;
      if (entry.isDirectory() && entry.name !== 'node_modules') walk(rel);
      else if (entry.name === 'README.md') out.push(rel);
    }
  };
  walk('apps');
  walk('libs');
  return out;
}

/** GitHub's anchors for a page's headings (lowercased, punctuation dropped, spaces to dashes, repeats numbered). */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  const withoutCode = markdown.replace(/^```[\s\S]*?^```/gm, '');
  for (const m of withoutCode.matchAll(/^#{1,6} +(.+?) *#*$/gm)) {
    const slug = (m[1] ?? '')
      .toLowerCase()
      .replace(/[^\p{L}\p{N} _-]/gu, '')
      .replace(/ /g, '-');
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    out.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return out;
}

interface Link {
  from: string;
  target: string;
}

function relativeLinks(file: string): Link[] {
  const text = fs.readFileSync(path.join(ROOT, file), 'utf8').replace(/^```[\s\S]*?^```/gm, '');
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((m) => m[1] ?? '')
    .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target))
    .map((target) => ({ from: file, target }));
}

function broken(link: Link): string | undefined {
  const [file = '', fragment] = link.target.split('#');
  const resolved = file === '' ? link.from : path.posix.normalize(path.posix.join(path.posix.dirname(link.from), file));
  const absolute = path.join(ROOT, resolved);
  if (!fs.existsSync(absolute)) return `${link.from}: ${link.target} (no ${resolved})`;
  if (fragment === undefined || !resolved.endsWith('.md')) return undefined;
  return anchors(fs.readFileSync(absolute, 'utf8')).has(fragment)
    ? undefined
    : `${link.from}: ${link.target} (no heading #${fragment} in ${resolved})`;
}

describe('documentation links', () => {
  const files = markdownFiles();

  it('reads the README, every docs/ page and the apps and libs READMEs', () => {
    expect(files).toContain('docs/configuration.md');
    expect(files).toContain('libs/webhooks/README.md');
  });

  it('point at files and headings that exist', () => {
    const links = files.flatMap(relativeLinks);
    expect(links.length).toBeGreaterThan(50);
    expect(links.map(broken).filter((problem) => problem !== undefined)).toEqual([]);
  });

  it('gives GitHub anchors to headings', () => {
    expect([...anchors('## Publish to testnet/mainnet\n### The CPU bound (2026-11-26)\n## A\n## A\n')]).toEqual([
      'publish-to-testnetmainnet',
      'the-cpu-bound-2026-11-26',
      'a',
      'a-1',
    ]);
  });
});
