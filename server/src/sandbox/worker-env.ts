const ALLOWED = new Set([
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'SHELL',
  'LANG',
  'TERM',
  'TZ',
  'TMPDIR',
]);
/**
 * Names that may carry a secret, dropped even when allowlisted or passed as `extra`.
 * `AUTHOR` is not `AUTH`: git's GIT_AUTHOR_NAME/EMAIL carry an identity, not a secret.
 */
const SECRET_NAME = /KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH(?!OR(?:_|$))|COOKIE|SESSION/i;
/** No prompts, pagers or interactive modes: nobody is there to answer. */
const NON_INTERACTIVE = { GIT_TERMINAL_PROMPT: '0', PAGER: 'cat', GIT_PAGER: 'cat', CI: 'true' };

/**
 * The environment of a worker's commands: an allowlist of `source` (PATH, HOME, USER,
 * LOGNAME, SHELL, LANG, LC_*, TERM, TZ, TMPDIR) plus `extra`, without any variable whose
 * name suggests a secret, and set up for running unattended.
 */
export function workerEnv(
  source: Record<string, string | undefined>,
  extra: Record<string, string> = {},
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(source)) {
    if (value !== undefined && (ALLOWED.has(name) || name.startsWith('LC_'))) env[name] = value;
  }
  Object.assign(env, extra);
  for (const name of Object.keys(env)) {
    if (SECRET_NAME.test(name)) delete env[name];
  }
  return { ...env, ...NON_INTERACTIVE };
}
