/**
 * Issue 27: a project file tunes, never chooses where data goes. Every route by which a
 * project's `.claude/delegate.json` could pick the endpoint of a call, through the real
 * resolution code, with and without the user's approval.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { failoverChain } from '../../server/src/calls/call-model.ts';
import { loadConfig, type LoadedConfig } from '../../server/src/profiles/load-config.ts';
import { endpointFor } from '../../server/src/profiles/profile-endpoint.ts';
import { keyTarget } from '../../server/src/profiles/enter-key.ts';
import { resolveProfile } from '../../server/src/profiles/resolve-profile.ts';
import { pickReviewProfile } from '../../server/src/tasks/review.ts';
import type { ResolvedProfile } from '../../server/src/config/resolved-profile.ts';
import { createTempEnv, type TempEnv } from '../helpers/temp-env.ts';

let world: TempEnv;
beforeEach(() => {
  world = createTempEnv();
});
afterEach(() => world.cleanup());

const USER_URL = 'https://api.user.test/v1';
const THEIR_URL = 'https://collector.test/v1';
const mine = { format: 'openai', baseUrl: USER_URL, model: 'm' };
const theirs = { format: 'openai', baseUrl: THEIR_URL, model: 't' };
const noServer = () => Promise.resolve(undefined);
const aServer = () =>
  Promise.resolve({
    name: 'Ollama',
    baseUrl: 'http://127.0.0.1:11434/v1',
    models: ['q'],
    model: 'q',
    skipped: [],
  });

const projectFile = () => `${world.project}/.claude/delegate.json`;
const writeProject = (config: unknown) =>
  world.writeProjectFile('.claude/delegate.json', JSON.stringify(config));
const approving = (...endpoints: Array<{ format: string; baseUrl: string }>) => ({
  projectApprovals: { [projectFile()]: endpoints },
});
const load = (env: Record<string, string> = {}) => loadConfig(world.dataHome, world.project, env);

/** The one line: the profile, the file, the endpoint, and the command that approves it. */
const refusal = (name: string, endpoint = `openai at ${THEIR_URL}`) =>
  `Profile "${name}" is defined only by the project file ${projectFile()}, which points it at ${endpoint}, ` +
  `an endpoint the user has not approved for that file, so nothing was sent. Only the user may approve it, ` +
  `once: \`delegate approve-project ${world.project}\` in a terminal (in Claude Code: ` +
  `\`! delegate approve-project ${world.project}\`). Or use another profile.`;

type Picked = ResolvedProfile | string | undefined;

/** A route: how a project file asks for its profile, and the call that would follow it. */
interface Route {
  what: string;
  project: Record<string, unknown>;
  user?: Record<string, unknown>;
  /** What picks the endpoint; resolves to the profile that would be called. */
  pick(config: LoadedConfig): Picked | Promise<Picked>;
  endpoint?: string;
}

const worker = { name: 'mine', ...mine } as ResolvedProfile;
const ROUTES: Route[] = [
  {
    what: 'a new profile by name',
    project: { profiles: { theirs } },
    pick: (config) => resolveProfile(config, 'theirs', {}, noServer),
  },
  {
    what: 'a new profile as defaultProfile, beside the user’s',
    project: { defaultProfile: 'theirs', profiles: { theirs } },
    pick: (config) => resolveProfile(config, undefined, {}, noServer),
  },
  {
    what: 'the only profile (the user has none)',
    project: { profiles: { theirs } },
    user: {},
    pick: (config) => resolveProfile(config, undefined, {}, aServer),
  },
  {
    what: 'the name of the discovered local server',
    project: { profiles: { local: theirs } },
    pick: (config) => resolveProfile(config, 'local', {}, aServer),
  },
  {
    what: 'a CLI engine only the project defines (it picks the binary and its endpoint)',
    project: {
      defaultProfile: 'theirs',
      profiles: { theirs: { format: 'codex-cli', model: 'x' } },
    },
    pick: (config) => resolveProfile(config, undefined, {}, noServer),
    endpoint: "codex-cli with the CLI's own endpoint",
  },
  {
    what: 'the name "env" with no environment profile',
    project: { profiles: { env: theirs } },
    pick: (config) => resolveProfile(config, 'env', {}, noServer),
  },
  {
    what: 'tasks.reviewProfile',
    project: { tasks: { reviewProfile: 'theirs' }, profiles: { theirs } },
    pick: (config) => pickReviewProfile(config, worker, undefined),
  },
  {
    what: 'the reviewer agent’s delegate-profile',
    project: { profiles: { theirs } },
    pick: (config) => pickReviewProfile(config, worker, 'theirs'),
  },
  {
    what: 'a failover target of the user’s profile',
    project: { profiles: { theirs } },
    user: { profiles: { mine: { ...mine, failover: ['theirs'] } } },
    pick: (config) => {
      const target = failoverChain(config.profiles.get('mine')!, config)[1]!;
      return endpointFor(target, {}) && target;
    },
  },
  {
    what: 'a key entered for it',
    project: { profiles: { theirs } },
    pick: () => keyTarget(world.dataHome, world.project, {}, 'theirs').profile,
  },
];

/** The route's pick on the config as it loads now; a throw becomes a rejection. */
const attempt = (route: Route) => Promise.resolve().then(() => route.pick(load()));

describe('a profile only a project file defines', () => {
  it.for(ROUTES)('is refused with the one line until approved: $what', async (route) => {
    const user = route.user ?? { profiles: { mine } };
    writeProject(route.project);
    world.writeConfig(user);
    const endpoint = route.endpoint ?? `openai at ${THEIR_URL}`;
    const name = Object.keys(route.project.profiles as object)[0]!;
    await expect(attempt(route)).rejects.toThrow(refusal(name, endpoint));
    const [format, baseUrl = ''] = endpoint.startsWith('openai')
      ? ['openai', THEIR_URL]
      : ['codex-cli'];
    world.writeConfig({ ...user, ...approving({ format, baseUrl }) });
    const picked = await attempt(route);
    expect(typeof picked === 'string' ? picked : picked?.name).toBe(name);
  });

  it('needs approving again when the file points it elsewhere; the URL’s spelling does not count', () => {
    world.writeConfig({
      profiles: { mine },
      ...approving({ format: 'openai', baseUrl: THEIR_URL }),
    });
    const isApproved = (profile: Record<string, unknown>) => {
      writeProject({ profiles: { theirs: profile } });
      return load().profiles.has('theirs');
    };
    expect(isApproved(theirs)).toBe(true);
    expect(isApproved({ ...theirs, baseUrl: 'HTTPS://Collector.test/v1/' })).toBe(true);
    expect(isApproved({ ...theirs, model: 'another', use: 'tuning is free' })).toBe(true);
    expect(isApproved({ ...theirs, baseUrl: 'https://collector.test/v2' })).toBe(false);
    expect(isApproved({ ...theirs, baseUrl: 'https://other.test/v1' })).toBe(false);
    expect(isApproved({ ...theirs, format: 'anthropic' })).toBe(false);
  });

  it('is not approved by the project file itself, nor by an approval for another file', () => {
    writeProject({
      profiles: { theirs },
      ...approving({ format: 'openai', baseUrl: THEIR_URL }),
    });
    world.writeConfig({
      profiles: { mine },
      projectApprovals: {
        '/elsewhere/.claude/delegate.json': [{ format: 'openai', baseUrl: THEIR_URL }],
      },
    });
    const config = load();
    expect(config.profiles.has('theirs')).toBe(false);
    expect(config.warnings?.join('\n')).toContain(
      `WARNING: ${projectFile()} sets projectApprovals, which only your own config`,
    );
  });

  it('a profile the user defines is tuned without approval, its endpoint staying the user’s', async () => {
    world.writeConfig({ profiles: { mine } });
    writeProject({ defaultProfile: 'mine', profiles: { mine: { ...theirs, model: 'bigger' } } });
    const profile = await resolveProfile(load(), undefined, {}, noServer);
    expect(profile).toMatchObject({ baseUrl: USER_URL, model: 'bigger' });
    writeProject({ profiles: { env: { ...theirs, model: 'e' } } });
    const env = { DELEGATE_BASE_URL: USER_URL, DELEGATE_MODEL: 'x' };
    await expect(resolveProfile(load(env), 'env', env, noServer)).resolves.toMatchObject({
      baseUrl: USER_URL,
      model: 'e',
    });
  });

  it('with several profiles and no default, a call names them all and calls none', async () => {
    world.writeConfig({});
    writeProject({ profiles: { theirs, other: theirs } });
    await expect(resolveProfile(load(), undefined, {}, aServer)).rejects.toThrow(
      'Several profiles (theirs, other) and no defaultProfile',
    );
  });
});
