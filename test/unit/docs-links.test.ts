import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const README = join(ROOT, 'README.md');
const DOCS = join(ROOT, 'docs');
const PAGES = [README, ...readdirSync(DOCS).map((name) => join(DOCS, name))].filter((path) =>
  path.endsWith('.md'),
);
const README_MAX_BYTES = 12 * 1024;

/** GitHub's heading anchor: lowercase, punctuation dropped, spaces to `-`, repeats numbered. */
function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  const withoutCode = markdown.replace(/^```[\s\S]*?^```/gm, '');
  for (const [, text] of withoutCode.matchAll(/^#{1,6} +(.+?) *#*$/gm)) {
    const base = (text ?? '')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

/** Relative links of a page (outside code), as [target file, anchor]. */
function relativeLinks(markdown: string): { target: string; anchor?: string }[] {
  const prose = markdown.replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, '');
  return [...prose.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((match) => match[1] ?? '')
    .filter((href) => !/^[a-z]+:/i.test(href))
    .map((href) => {
      const [target = '', anchor] = href.split('#');
      return { target, anchor };
    });
}

describe('README and docs pages', () => {
  it('anchors are computed the way GitHub does', () => {
    expect([...headingAnchors('# Hooks, monitor and status line\n## Keys\n## Keys\n')]).toEqual([
      'hooks-monitor-and-status-line',
      'keys',
      'keys-1',
    ]);
    expect(headingAnchors('## Why `package.json` has `"overrides": {}`')).toContain(
      'why-packagejson-has-overrides-',
    );
  });

  it.each(PAGES.map((path) => [relative(ROOT, path), path]))(
    '%s: every relative link reaches a file and, with #, a heading in it',
    (_name, path) => {
      const broken: string[] = [];
      for (const { target, anchor } of relativeLinks(readFileSync(path, 'utf8'))) {
        const file = target ? resolve(dirname(path), target) : path;
        if (!existsSync(file)) {
          broken.push(`${target}: no such file`);
        } else if (anchor && statSync(file).isFile() && file.endsWith('.md')) {
          if (!headingAnchors(readFileSync(file, 'utf8')).has(anchor)) {
            broken.push(`${target}#${anchor}: no such heading`);
          }
        }
      }
      expect(broken).toEqual([]);
    },
  );

  it(`the README stays within ${README_MAX_BYTES} bytes and links every docs page`, () => {
    expect(statSync(README).size).toBeLessThanOrEqual(README_MAX_BYTES);
    const readme = readFileSync(README, 'utf8');
    for (const path of PAGES.filter((page) => page !== README)) {
      expect(readme).toContain(`](docs/${relative(DOCS, path)})`);
    }
  });

  it('no page names the repository URL that does not exist', () => {
    for (const path of [...PAGES, join(ROOT, 'plugin', '.claude-plugin', 'plugin.json')]) {
      expect(readFileSync(path, 'utf8')).not.toContain('github.com/delegate-dev');
    }
  });
});
