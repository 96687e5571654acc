import { mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { describeShape, findGitShapes, makeInert } from '../../server/src/git/git-shapes.ts';

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'delegate-git-shapes-'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

/** Makes files (content given) and folders (paths ending in '/') below root. */
function make(paths: string[]): void {
  for (const path of paths) {
    const absolute = join(root, path);
    if (path.endsWith('/')) mkdirSync(absolute, { recursive: true });
    else {
      mkdirSync(dirname(absolute), { recursive: true });
      writeFileSync(absolute, `${path}\n`);
    }
  }
}

const found = async () => (await findGitShapes(root)).shapes.map((s) => `${s.kind} ${s.path}`);

describe('findGitShapes: what git could treat as a repository or configuration', () => {
  const cases: Array<[what: string, paths: string[], expected: string[]]> = [
    [
      'a bare repository under any name',
      ['evil/HEAD', 'evil/objects/', 'evil/refs/'],
      ['git-dir evil'],
    ],
    ['HEAD and a config only', ['x/HEAD', 'x/config'], ['git-dir x']],
    [
      'a worktree admin folder (HEAD, commondir, gitdir)',
      ['adm/HEAD', 'adm/commondir', 'adm/gitdir'],
      ['git-dir adm'],
    ],
    ['deep in nested folders', ['a/b/c/d.git/HEAD', 'a/b/c/d.git/refs/'], ['git-dir a/b/c/d.git']],
    ['HEAD in another case', ['x/head', 'x/Objects/'], ['git-dir x']],
    ['the scanned folder itself', ['HEAD', 'objects/', 'refs/'], ['git-dir ']],
    ['a .git folder', ['sub/.git/HEAD'], ['dot-git sub/.git']],
    ['a .git file (a pointer)', ['sub/.git'], ['dot-git sub/.git']],
    ['.GIT in another case', ['sub/.GIT/'], ['dot-git sub/.GIT']],
    ['.git with a character HFS+ ignores', ['sub/.g\u200cit/'], ['dot-git sub/.g\u200cit']],
    [
      '.gitmodules',
      ['.gitmodules', 'lib/.gitmodules'],
      ['gitmodules .gitmodules', 'gitmodules lib/.gitmodules'],
    ],
    // What is not git metadata, though it looks a little like it.
    ['a HEAD file alone', ['notes/HEAD', 'notes/todo.md'], []],
    [
      'a config folder, refs and objects without HEAD',
      ['config/app.json', 'x/refs/', 'x/objects/', 'x/config'],
      [],
    ],
    ['.github and .gitignore', ['.github/workflows/ci.yml', '.gitignore', '.gitattributes'], []],
  ];
  for (const [what, paths, expected] of cases) {
    it(what, async () => {
      make(paths);
      expect(await found()).toEqual(expected);
    });
  }

  it('does not search inside a shape, nor follow links', async () => {
    make(['evil/HEAD', 'evil/refs/', 'evil/inner/.git/', 'elsewhere/HEAD', 'elsewhere/refs/']);
    symlinkSync(join(root, 'elsewhere'), join(root, 'link'));
    rmSync(join(root, 'elsewhere'), { recursive: true });
    expect(await found()).toEqual(['git-dir evil']);
  });

  it('leaves out the checkout’s own .git', async () => {
    make(['.git/HEAD', '.git/refs/', 'sub/.git/']);
    const shapes = await findGitShapes(root, join(root, '.git'));
    expect(shapes.shapes.map((shape) => shape.path)).toEqual(['sub/.git']);
  });

  it('fingerprints what git acts on: config and hooks change it, refs and objects do not', async () => {
    make(['r/HEAD', 'r/config', 'r/refs/heads/main', 'r/objects/ab/cdef', 'r/hooks/']);
    const first = (await findGitShapes(root)).shapes[0]!.fingerprint;
    writeFileSync(join(root, 'r/refs/heads/main'), 'another commit\n');
    writeFileSync(join(root, 'r/objects/ab/0123'), 'an object\n');
    expect((await findGitShapes(root)).shapes[0]!.fingerprint).toBe(first);
    writeFileSync(join(root, 'r/hooks/post-checkout'), '#!/bin/sh\n');
    const withHook = (await findGitShapes(root)).shapes[0]!.fingerprint;
    expect(withHook).not.toBe(first);
    writeFileSync(join(root, 'r/config'), '[core]\n\tfsmonitor = evil\n');
    expect((await findGitShapes(root)).shapes[0]!.fingerprint).not.toBe(withHook);
  });

  it('fingerprints a .git pointer file by its content', async () => {
    make(['sub/.git']);
    const first = (await findGitShapes(root)).shapes[0]!.fingerprint;
    writeFileSync(join(root, 'sub/.git'), 'gitdir: /elsewhere\n');
    expect((await findGitShapes(root)).shapes[0]!.fingerprint).not.toBe(first);
  });

  it('says why a folder is a repository', async () => {
    make(['evil/HEAD', 'evil/objects/', 'evil/config']);
    const [shape] = (await findGitShapes(root)).shapes;
    expect(await describeShape(root, shape!)).toMatch(/^evil\/ looks like a repository \(HEAD, /);
  });
});

describe('makeInert', () => {
  it('renames every HEAD and .git inside, so no repository is found there', async () => {
    make([
      'q/HEAD',
      'q/objects/',
      'q/refs/',
      'q/deep/.git/HEAD',
      'q/deep/x/HEAD',
      'q/deep/x/refs/',
    ]);
    await makeInert(join(root, 'q'));
    expect(readdirSync(join(root, 'q')).sort()).toEqual(['HEAD.inert', 'deep', 'objects', 'refs']);
    expect(readdirSync(join(root, 'q/deep')).sort()).toEqual(['dot-git.inert', 'x']);
    expect((await findGitShapes(join(root, 'q'))).shapes).toEqual([]);
  });
});
