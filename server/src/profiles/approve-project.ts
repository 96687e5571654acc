import { existsSync } from 'node:fs';
import { withFileLock } from '../util/file-lock.ts';
import { writeFileAtomicSync } from '../util/atomic-write.ts';
import { UserError, errorMessage } from '../util/user-error.ts';
import {
  configPath,
  projectConfigPath,
  settingsLockPath,
  type Environment,
} from '../config/paths.ts';
import {
  approvalKey,
  describeEndpoint,
  endpointOf,
  PROJECT_APPROVALS,
  type ProfileEndpoint,
} from '../config/project-approvals.ts';
import { loadConfig } from './load-config.ts';
import { readUserConfig } from './manage-profiles.ts';

type Json = Record<string, unknown>;

/**
 * What `delegate approve-project` does, and nothing else can: records in the user's
 * config.json, under the project file's real path, the endpoint of every profile only that
 * file defines and the user has not approved yet (see project-approval.ts). It is a terminal
 * command on purpose: no MCP tool reaches it, so a model cannot approve on its own. Returns
 * what was approved, for the user to read.
 */
export async function approveProject(context: {
  dataHome: string;
  projectDir: string;
  env: Environment;
}): Promise<string> {
  const { dataHome, projectDir, env } = context;
  const projectFile = projectConfigPath(projectDir);
  if (!existsSync(projectFile)) {
    throw new UserError(`No project file at ${projectFile}: nothing to approve.`);
  }
  return withFileLock(settingsLockPath(dataHome), () => {
    const pending = [...(loadConfig(dataHome, projectDir, env).unapproved?.values() ?? [])];
    if (pending.length === 0) {
      return Promise.resolve(
        `Nothing to approve: every profile ${projectFile} defines is yours or already approved.`,
      );
    }
    const file = configPath(dataHome);
    const json = readUserConfig(file);
    const key = approvalKey(projectFile);
    const approvals = approvalsOf(json);
    const endpoints = withEndpoints(approvals[key], pending.map(endpointOf));
    const next: Json = { ...json, [PROJECT_APPROVALS]: { ...approvals, [key]: endpoints } };
    try {
      loadConfig(dataHome, projectDir, env, next);
    } catch (error) {
      throw new UserError(`Nothing was approved: ${errorMessage(error)}`);
    }
    writeFileAtomicSync(file, `${JSON.stringify(next, null, 2)}\n`);
    const lines = pending.map(
      (profile) => `- ${profile.name}: ${describeEndpoint(endpointOf(profile))}`,
    );
    return Promise.resolve(
      `Approved for ${key} (recorded in ${file}):\n${lines.join('\n')}\n` +
        'Calls may use these profiles from now on. If the file points one elsewhere later, it needs approving again.',
    );
  });
}

/** The user config's approvals as a prototype-free object (a path is a name like any other). */
function approvalsOf(json: Json): Json {
  const approvals = json[PROJECT_APPROVALS];
  const copy = Object.create(null) as Json;
  return approvals && typeof approvals === 'object' ? Object.assign(copy, approvals) : copy;
}

/** The endpoints already approved for the file, with the new ones added once. */
function withEndpoints(listed: unknown, added: ProfileEndpoint[]): ProfileEndpoint[] {
  const endpoints = Array.isArray(listed) ? [...(listed as ProfileEndpoint[])] : [];
  const has = (endpoint: ProfileEndpoint) =>
    endpoints.some(
      (entry) => entry.format === endpoint.format && entry.baseUrl === endpoint.baseUrl,
    );
  for (const endpoint of added) if (!has(endpoint)) endpoints.push(endpoint);
  return endpoints;
}
