import { dirname, join } from 'node:path';
import { z } from 'zod';

import { UserError } from '../util/user-error.ts';
import { WRITES_LOCAL_FILES } from './annotations.ts';
import { checkProfileArgument, defineTool } from './define-tool.ts';

export const providerKeyTool = defineTool({
  name: 'provider_key',
  title: 'Ask the user for a key',
  description:
    "Asks the USER for a profile's API key in a form (copilot: a GitHub login), stores it bound to its host; the key never reaches you.",
  inputSchema: () => ({ profile: z.string().describe('Profile name.') }),
  shouldSeeUnknownArguments: true,
  nativeTask: 'call',
  annotations: WRITES_LOCAL_FILES,
  handler: async (input, { context, services, call }) => {
    const extra = Object.keys(input).filter((name) => name !== 'profile');
    if (extra.length) {
      throw new UserError(
        `provider_key takes only profile (got ${extra.join(', ')}): keys are never tool arguments; the user types the key into the form.`,
      );
    }
    checkProfileArgument(input.profile, 'profile');
    const { keyPromptText, keyTarget, noFormText, storeEnteredKey } = services;
    const { dataHome, projectDir, env } = context;
    const target = keyTarget(dataHome, projectDir, env, input.profile);
    if (target.profile.format === 'copilot') {
      return services.copilotKeyStep(target.profile, env);
    }
    const cli = context.workerScript
      ? join(dirname(context.workerScript), '..', 'bin', 'delegate')
      : 'delegate';
    if (!call.askUser) throw new UserError(noFormText(input.profile, cli));
    const answer = await call.askUser({
      message: keyPromptText(target, dataHome),
      title: 'API key',
      description: `Sent only to ${target.origin}`,
    });
    if (answer.action !== 'accept' || answer.value === undefined) {
      return `The user ${answer.action === 'cancel' ? 'cancelled' : 'declined'}; no key was stored for "${input.profile}". Do not ask again unless the user wants to.`;
    }
    return storeEnteredKey(dataHome, target, answer.value, context.now());
  },
});
