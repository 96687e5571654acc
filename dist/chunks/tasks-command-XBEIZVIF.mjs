import { createRequire as __bannerCreateRequire } from 'node:module'; const require = __bannerCreateRequire(import.meta.url);
import{parseCli}from"./chunk-HHXJ6WTJ.mjs";import{damagedStatusLine,projectTaskList}from"./chunk-6MR264FM.mjs";import{statusLine}from"./chunk-5YZOZFCL.mjs";import{isTerminal}from"./chunk-YXA5RYGV.mjs";import"./chunk-GM2E6RPK.mjs";import"./chunk-YAKWBQ6U.mjs";import"./chunk-FZCZWRSX.mjs";import"./chunk-7W4DHW2N.mjs";import"./chunk-DKAQYD53.mjs";import"./chunk-IJBVQAYQ.mjs";import"./chunk-2BCT36RK.mjs";import"./chunk-3B4ETD2S.mjs";import"./chunk-DBWPELDU.mjs";import"./chunk-K5TGMIHH.mjs";import"./chunk-JZIFPIVY.mjs";import{CLI_WORDING}from"./chunk-QAOIP57B.mjs";import"./chunk-QMHBUEAH.mjs";import"./chunk-SUKYDKUG.mjs";import"./chunk-6R3DVGTV.mjs";import"./chunk-54QLYERL.mjs";import"./chunk-AEK6PQGZ.mjs";import"./chunk-5J7RWOGQ.mjs";import{realpathSync}from"node:fs";var USAGE="tasks [--json]",tasksCommand={usage:USAGE,summary:"list this project's tasks, one line each",help:`Lists this project's background tasks, newest first, one line each with what to do next. A task whose
worker died shows as lost.

Options:
  --json   one JSON array of tasks (id, state, verdict, reviewed, createdAt, task, line); [] when none.
           A task whose files do not parse has state "damaged" and a "damaged" object (file,
           problem, worktree, branch); delegate cleanup <id> removes it.`,async run(args,context){let parsed=parseCli(args,{json:{type:"boolean"}},USAGE,context);if(!parsed)return 2;if(parsed.positionals.length>0)return context.stderr.write(`delegate: tasks takes no arguments.
Usage: delegate ${USAGE}
`),2;let project=realpathSync(context.projectDir),{jobs,damaged}=await projectTaskList(context.dataHome,project);if(parsed.values.json){let entries=[...jobs.map(taskJson),...damaged.map(damagedJson)];return context.stdout.write(`${JSON.stringify(entries)}
`),0}for(let job of damaged)context.stdout.write(`${damagedStatusLine(job,CLI_WORDING)}
`);if(jobs.length===0&&damaged.length===0)return context.stdout.write(`No tasks in this project (${project}).
`),0;for(let job of jobs){let reviewed=isTerminal(job.state)&&job.reviewedAt?" \xB7 reviewed":"";context.stdout.write(`${statusLine(job,Date.now(),CLI_WORDING)}${reviewed}
`)}return 0}};function taskJson(job){return{id:job.id,state:job.state,verdict:job.verdict??null,reviewed:!!job.reviewedAt,createdAt:job.createdAt,task:job.task,line:statusLine(job,Date.now(),CLI_WORDING)}}function damagedJson(job){return{id:job.id,state:"damaged",verdict:null,reviewed:!1,createdAt:null,task:null,line:damagedStatusLine(job,CLI_WORDING),damaged:{file:job.file,problem:job.problem,worktree:job.worktreePath??null,branch:job.branch??null}}}export{tasksCommand};
