import { createRequire as __bannerCreateRequire } from 'node:module'; const require = __bannerCreateRequire(import.meta.url);
import{scoreboardText}from"./chunk-NH4ZUYSG.mjs";import{parseCli}from"./chunk-HHXJ6WTJ.mjs";import{projectKey,readOutcomes,resetOutcomes}from"./chunk-SG7MYFO3.mjs";import"./chunk-LBTP2B6K.mjs";import"./chunk-3EMS4ZME.mjs";import"./chunk-T655MFA4.mjs";import"./chunk-W2ZTUYJ2.mjs";import"./chunk-IJBVQAYQ.mjs";import"./chunk-QPTF5ECZ.mjs";import"./chunk-AEK6PQGZ.mjs";import"./chunk-5J7RWOGQ.mjs";var USAGE="scoreboard [--all] [--reset [--profile <name>]]",scoreboardCommand={usage:USAGE,summary:"each profile's verified pass rate, cost per pass and time, by task kind; --reset forgets",help:`Shows, for this project (--all: every project), each profile's record from the outcomes this machine
kept: tasks run, how many of the verified ones passed (tests, then the reviewer), the cost per passed
task, the median time and fix rounds; for one-shots and explorations, whole answers, errors and
cut-offs. profile "auto" chooses by it. Nothing of it leaves this machine.

--reset forgets this project's outcomes (with --all, every project's; with --profile, only that
profile's), so "auto" learns afresh.`,run(args,context){let parsed=parseCli(args,{all:{type:"boolean"},reset:{type:"boolean"},profile:{type:"string"}},USAGE,context);if(!parsed)return Promise.resolve(2);let{all,reset,profile}=parsed.values;if(parsed.positionals.length>0||profile!==void 0&&!reset)return context.stderr.write(`delegate scoreboard: ${profile!==void 0?"--profile goes with --reset":`unexpected "${parsed.positionals.join(" ")}"`}
Usage: delegate ${USAGE}
`),Promise.resolve(2);let project=all?void 0:projectKey(context.projectDir);if(reset){let forgotten=resetOutcomes(context.dataHome,{...project!==void 0?{project}:{},...profile!==void 0?{profile}:{}}),whose=`${profile!==void 0?`profile ${profile}'s `:""}outcomes of ${project??"every project"}`;return context.stdout.write(`Forgot ${forgotten} ${whose}.
`),Promise.resolve(0)}return context.stdout.write(`${scoreboardText(readOutcomes(context.dataHome),project)}
`),Promise.resolve(0)}};export{scoreboardCommand};
