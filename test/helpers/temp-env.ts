import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/** A private world for one test: its own HOME, data home and project folder. */
export interface TempEnv {
  root: string;
  home: string;
  dataHome: string;
  project: string;
  /** Environment for processes under test: no inherited keys, no real HOME. */
  env: Record<string, string>;
  writeConfig(config: unknown): void;
  writeProjectFile(relativePath: string, content: string | Buffer): string;
  cleanup(): void;
}

/** A port where nothing listens (and that fetch does not refuse as a "bad port"). */
export const CLOSED_URL = 'http://127.0.0.1:2/v1';
/** Auto-discovery finds no local server unless a test says so. */
export const NO_DISCOVERY = `none=${CLOSED_URL}`;

export function createTempEnv(): TempEnv {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'delegate-test-')));
  const home = join(root, 'home');
  const dataHome = join(root, 'data');
  const project = join(root, 'project');
  for (const dir of [home, dataHome, project]) mkdirSync(dir, { recursive: true });
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    DELEGATE_HOME: dataHome,
    CLAUDE_PROJECT_DIR: project,
    DELEGATE_DISCOVERY_URLS_FOR_TEST: NO_DISCOVERY,
    LANG: 'C.UTF-8',
  };
  return {
    root,
    home,
    dataHome,
    project,
    env,
    writeConfig: (config) =>
      writeFileSync(join(dataHome, 'config.json'), JSON.stringify(config, null, 2)),
    writeProjectFile: (relativePath, content) => {
      const path = join(project, relativePath);
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, content);
      return path;
    },
    cleanup: () => rmSync(root, { recursive: true, force: true }),
  };
}

/**
 * The user-config field that approves, for the world's project file, these endpoints of the
 * profiles only that file defines (see profiles/project-approval.ts): for tests about something
 * else that use a project's own profile.
 */
export function projectApprovals(
  world: TempEnv,
  ...endpoints: Array<{ format: string; baseUrl: string }>
): { projectApprovals: Record<string, Array<{ format: string; baseUrl: string }>> } {
  return { projectApprovals: { [join(world.project, '.claude', 'delegate.json')]: endpoints } };
}

/** A deterministic text log of about `bytes` bytes, with a marker line near the end. */
export function makeLog(bytes: number, marker = 'ERROR disk full on /var/data'): string {
  const lines: string[] = [];
  let size = 0;
  for (let index = 0; size < bytes - marker.length - 64; index += 1) {
    const line = `2026-11-30T03:${String(index % 60).padStart(2, '0')}:00Z INFO request ${index} served in ${index % 97} ms`;
    lines.push(line);
    size += line.length + 1;
  }
  lines.push(`2026-11-30T04:00:00Z ${marker}`);
  const text = `${lines.join('\n')}\n`;
  return (
    text + 'x'.repeat(Math.max(0, bytes - text.length - 1)) + (bytes > text.length ? '\n' : '')
  );
}

/** A job.json the way the task engine writes it (the fields readers outside it rely on). */
export function writeJobFixture(
  dataHome: string,
  job: { id: string } & Record<string, unknown>,
): void {
  mkdirSync(join(dataHome, 'jobs', job.id), { recursive: true });
  writeFileSync(join(dataHome, 'jobs', job.id, 'job.json'), JSON.stringify(job));
}
