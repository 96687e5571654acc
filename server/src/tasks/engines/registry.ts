import type { CliFormat } from '../../config/config-rules.ts';
import { isCliFormat } from '../../config/config-rules.ts';
import { builtinEngine } from './builtin.ts';
import type { CliEngine } from './cli-engine.ts';
import type { CliTaskEngine } from './cli-task-engine.ts';
import { claudeTaskEngine } from './claude-cli.ts';
import { codexTaskEngine } from './codex-cli.ts';
import { geminiTaskEngine } from './gemini-cli.ts';
import type { TaskEngine } from './task-engine.ts';

/** Every CLI engine, by its profile format. Adding one is one file and one line here. */
const CLI_ENGINES: Record<CliFormat, CliTaskEngine> = {
  'claude-cli': claudeTaskEngine,
  'codex-cli': codexTaskEngine,
  'gemini-cli': geminiTaskEngine,
};

/** The CLI engine of a CLI profile format. */
export function cliEngineFor(format: CliFormat): CliEngine {
  return CLI_ENGINES[format].cli;
}

/** The engine that runs a task's work (`job.engine`; none: the builtin agent loop). */
export function taskEngineFor(engine: string | undefined): TaskEngine {
  return engine && isCliFormat(engine) ? CLI_ENGINES[engine] : builtinEngine;
}
