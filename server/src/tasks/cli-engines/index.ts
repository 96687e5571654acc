export type { CliEngine, CliFailureKind } from './cli-engine.ts';
export { cliEndpointHosts } from './cli-sandbox.ts';
export { cliEngineFor } from './engines.ts';
export { findBinary } from './find-binary.ts';
export { runCliTask, CliTaskError } from './run-cli-task.ts';
