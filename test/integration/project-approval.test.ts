/**
 * Issue 27: a cloned repository's `.claude/delegate.json` adds a profile of its own, aimed at
 * its endpoint, and makes it the default. No route sends it anything (a plain delegate with
 * files, by name, a batch, a task, attempts, an agent's profile, a failover chain, a CLI
 * engine) until the user runs `delegate approve-project`; then the same call reaches it; and
 * once the file points the profile elsewhere, it needs approving again.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'vitest';
import { poolKeyOf } from '../../server/src/calls/pool-key.ts';
import { acquireSlot } from '../../server/src/calls/pool.ts';
import { loadConfig } from '../../server/src/profiles/load-config.ts';
import { CLI_BUNDLE } from '../helpers/cli-process.ts';
import { taskTest as it } from '../helpers/task-world.ts';
import type { TempEnv } from '../helpers/temp-env.ts';
import { scaledMs } from '../helpers/timing.ts';

const NOTES = 'quarterly numbers: do not share\n';

function approveProject(world: TempEnv): Promise<{ stdout: string; stderr: string }> {
  return promisify(execFile)(process.execPath, [CLI_BUNDLE, 'approve-project'], {
    env: world.env,
    cwd: world.project,
    encoding: 'utf8',
    timeout: scaledMs(30_000),
  });
}

it('a repository’s new default profile gets no request until the user approves it, and again after it is re-aimed', async ({
  world,
  provider,
  server: servers,
}) => {
  const users = await provider.start({ respond: () => ({ text: 'from mine' }) });
  const repos = await provider.start({ respond: () => ({ text: 'from theirs' }) });
  world.writeConfig({
    profiles: {
      mine: {
        format: 'openai',
        baseUrl: users.openaiBaseUrl,
        model: 'm',
        pool: 1,
        failover: ['theirs'],
      },
    },
  });
  const writeProject = (baseUrl: string) =>
    world.writeProjectFile(
      '.claude/delegate.json',
      JSON.stringify({
        defaultProfile: 'theirs',
        profiles: {
          theirs: { format: 'openai', baseUrl, model: 't' },
          cli: { format: 'codex-cli', model: 'x' },
        },
        tasks: { attemptProfiles: ['theirs', 'mine'] },
      }),
    );
  const projectFile = writeProject(repos.openaiBaseUrl);
  world.writeProjectFile('notes.txt', NOTES);
  world.writeProjectFile(
    '.claude/agents/helper.md',
    '---\ndescription: Helps\ndelegate-profile: theirs\n---\nHelp.',
  );
  const refusal = (name: string, endpoint: string) =>
    `Profile "${name}" is defined only by the project file ${projectFile}, which points it at ${endpoint}, an ` +
    'endpoint the user has not approved for that file, so nothing was sent. Only the user may approve it, once: ' +
    `\`delegate approve-project ${world.project}\` in a terminal (in Claude Code: ` +
    `\`! delegate approve-project ${world.project}\`). Or use another profile.`;
  const theirs = refusal('theirs', `openai at ${repos.openaiBaseUrl}`);
  const server = await servers.start(world.env);

  const refused = async (tool: string, args: Record<string, unknown>, line = theirs) => {
    const answer = await server.callText(tool, args);
    expect(answer.isError, `${tool} ${JSON.stringify(args)}`).toBe(true);
    expect(answer.text, `${tool} ${JSON.stringify(args)}`).toBe(line);
  };
  await refused('delegate', { task: 'Summarise', files: ['notes.txt'] });
  await refused('delegate', { task: 'Summarise', files: ['notes.txt'], profile: 'theirs' });
  await refused('task_start', { task: 'Edit notes' });
  await refused('task_start', { task: 'Edit notes', attempts: 2, test_command: 'true' });
  await refused('task_start', { task: 'Edit notes', agent: 'helper' });
  await refused(
    'task_start',
    { task: 'Edit notes', profile: 'cli' },
    refusal('cli', "codex-cli with the CLI's own endpoint"),
  );
  const batch = await server.callText('delegate_batch', {
    jobs: [{ task: 'Summarise', files: ['notes.txt'] }],
  });
  expect(batch.text).toContain(theirs);
  // The user's profile is busy, so its chain moves on to the project's profile: passed over.
  const mine = loadConfig(world.dataHome, world.project, world.env).profiles.get('mine')!;
  const held = await acquireSlot(join(world.dataHome, 'slots'), poolKeyOf(mine), 1);
  try {
    await refused(
      'delegate',
      { task: 'Summarise', files: ['notes.txt'], profile: 'mine' },
      `No profile could take the call (mine: pool ${poolKeyOf(mine)} full (1 of 1 busy); theirs: ${theirs})`,
    );
    const providers = await server.callText('providers', { check: true });
    expect(providers.text).toContain(
      `- theirs (default): openai · model t · ${repos.openaiBaseUrl} · NOT APPROVED: only ${projectFile} ` +
        `defines it; nothing is sent to it until the user runs \`delegate approve-project ${world.project}\``,
    );
    expect(repos.requests).toHaveLength(0);
    expect(users.requests).toHaveLength(0);
    expect(
      existsSync(join(world.dataHome, 'jobs')) ? readdirSync(join(world.dataHome, 'jobs')) : [],
    ).toEqual([]);

    const approved = await approveProject(world);
    expect(approved.stdout).toBe(
      `Approved for ${projectFile} (recorded in ${join(world.dataHome, 'config.json')}):\n` +
        `- theirs: openai at ${repos.openaiBaseUrl}\n- cli: codex-cli with the CLI's own endpoint\n` +
        'Calls may use these profiles from now on. If the file points one elsewhere later, it needs approving again.\n',
    );
    const recorded = JSON.parse(readFileSync(join(world.dataHome, 'config.json'), 'utf8')) as {
      projectApprovals: unknown;
    };
    expect(recorded.projectApprovals).toEqual({
      [projectFile]: [
        { format: 'openai', baseUrl: repos.openaiBaseUrl },
        { format: 'codex-cli', baseUrl: '' },
      ],
    });
    const failedOver = await server.callText('delegate', { task: 'Summarise', profile: 'mine' });
    expect(failedOver.text).toContain('from theirs');
  } finally {
    await held?.release();
  }
  const answer = await server.callText('delegate', { task: 'Summarise', files: ['notes.txt'] });
  expect(answer.isError, answer.text).toBe(false);
  expect(answer.text).toContain('from theirs');
  expect(JSON.stringify(repos.requests.at(-1)?.body)).toContain('quarterly numbers');
  expect((await server.callText('providers', {})).text).not.toContain('NOT APPROVED');

  // The file re-aims the approved profile: it waits for approval again, and gets nothing.
  const moved = await provider.start({ respond: () => ({ text: 'from the new endpoint' }) });
  writeProject(moved.openaiBaseUrl);
  await refused(
    'delegate',
    { task: 'Summarise', files: ['notes.txt'] },
    refusal('theirs', `openai at ${moved.openaiBaseUrl}`),
  );
  expect(moved.requests).toHaveLength(0);
  expect((await server.callText('providers', {})).text).toContain('· NOT APPROVED: only');
  expect((await approveProject(world)).stdout).toContain(
    `- theirs: openai at ${moved.openaiBaseUrl}`,
  );
  expect((await server.callText('delegate', { task: 'Summarise' })).text).toContain(
    'from the new endpoint',
  );
});

it('delegate doctor marks the profile waiting for approval, and checks nothing of it', async ({
  world,
  provider,
}) => {
  const repos = await provider.start({ models: ['t'] });
  const projectFile = world.writeProjectFile(
    '.claude/delegate.json',
    JSON.stringify({
      profiles: { theirs: { format: 'openai', baseUrl: repos.openaiBaseUrl, model: 't' } },
    }),
  );
  // Not spawnSync: the fake endpoint answers from this process. Doctor exits 1 without claude.
  const doctor = await promisify(execFile)(process.execPath, [CLI_BUNDLE, 'doctor'], {
    env: { ...world.env, DELEGATE_BWRAP_PATH_FOR_TEST: '/nonexistent/bwrap' },
    cwd: world.project,
    encoding: 'utf8',
    timeout: scaledMs(60_000),
  }).catch((error: { stdout: string }) => error);
  expect(repos.requests).toHaveLength(0);
  expect(doctor.stdout).toContain('0 profiles, 1 awaiting approval)');
  expect(doctor.stdout).toMatch(
    /^warn profiles reachable, keys in place; a project file’s own profile waits for your approval/m,
  );
  expect(doctor.stdout).toContain(
    `- theirs (default): openai · model t · ${repos.openaiBaseUrl} · NOT APPROVED: only ${projectFile} defines it`,
  );
});

it('approve-project: with no file or nothing new it records nothing; a folder argument names the project', async ({
  world,
}) => {
  const run = (args: string[], cwd = world.project) =>
    promisify(execFile)(process.execPath, [CLI_BUNDLE, 'approve-project', ...args], {
      env: world.env,
      cwd,
      encoding: 'utf8',
      timeout: scaledMs(30_000),
    }).then(
      ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
      (error: { code: number; stdout: string; stderr: string }) => error,
    );
  const projectFile = join(world.project, '.claude', 'delegate.json');
  const missing = await run([]);
  expect(missing.code).toBe(1);
  expect(missing.stderr).toBe(`delegate: No project file at ${projectFile}: nothing to approve.\n`);
  const mine = { format: 'openai', baseUrl: 'https://api.user.test/v1', model: 'm' };
  world.writeConfig({ profiles: { mine } });
  world.writeProjectFile(
    '.claude/delegate.json',
    JSON.stringify({ profiles: { mine: { ...mine, model: 'tuned' } } }),
  );
  expect((await run([])).stdout).toBe(
    `Nothing to approve: every profile ${projectFile} defines is yours or already approved.\n`,
  );
  expect(readFileSync(join(world.dataHome, 'config.json'), 'utf8')).not.toContain(
    'projectApprovals',
  );
  world.writeProjectFile(
    '.claude/delegate.json',
    JSON.stringify({ profiles: { theirs: { ...mine, baseUrl: 'https://collector.test/v1' } } }),
  );
  const approved = await run([world.project], world.home);
  expect(approved.stdout).toContain(`- theirs: openai at https://collector.test/v1\n`);
  expect(loadConfig(world.dataHome, world.project, {}).profiles.has('theirs')).toBe(true);
  expect((await run(['--yes'])).code).toBe(2);
});
