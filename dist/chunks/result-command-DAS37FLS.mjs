import { createRequire as __bannerCreateRequire } from 'node:module'; const require = __bannerCreateRequire(import.meta.url);
import{parseCli,usageError}from"./chunk-HHXJ6WTJ.mjs";import{INLINE_PATCH_MAX_BYTES,reviewTask}from"./chunk-6PSQNT64.mjs";import"./chunk-6MR264FM.mjs";import"./chunk-5YZOZFCL.mjs";import"./chunk-YXA5RYGV.mjs";import"./chunk-GM2E6RPK.mjs";import"./chunk-YAKWBQ6U.mjs";import"./chunk-FZCZWRSX.mjs";import"./chunk-7W4DHW2N.mjs";import"./chunk-DKAQYD53.mjs";import"./chunk-IJBVQAYQ.mjs";import"./chunk-2BCT36RK.mjs";import"./chunk-3B4ETD2S.mjs";import"./chunk-DBWPELDU.mjs";import{formatBytes}from"./chunk-K5TGMIHH.mjs";import"./chunk-JZIFPIVY.mjs";import{CLI_WORDING}from"./chunk-QAOIP57B.mjs";import"./chunk-QMHBUEAH.mjs";import"./chunk-SUKYDKUG.mjs";import"./chunk-6R3DVGTV.mjs";import"./chunk-54QLYERL.mjs";import"./chunk-AEK6PQGZ.mjs";import"./chunk-5J7RWOGQ.mjs";var USAGE="result <task id> [--patch] [--json]",resultCommand={usage:USAGE,summary:"an ended task's verdict, test output, summary, files changed and patch",help:`Shows what an ended task did: the verdict with the test command's exit code and output tail, the
summary, the files changed, the diffstat, the patch (inline when small) and how to take the work.
Reading it marks the task reviewed. A running task prints its status line.

Options:
  --patch   print the patch even when it is large (its first ${formatBytes(INLINE_PATCH_MAX_BYTES)} at most;
            the whole patch is in the file the result names)
  --json    one JSON object: id, state, ended, verdict, the result file's fields, the patch
            (the same start of it) and patchCut (true when the patch was cut)`,async run(args,context){let parsed=parseCli(args,{patch:{type:"boolean"},json:{type:"boolean"}},USAGE,context);if(!parsed)return 2;let[id,...rest]=parsed.positionals;if(!id||rest.length>0)return usageError(context,"name one task id.",USAGE);let review=await reviewTask(context.dataHome,id,{includePatch:parsed.values.patch??!1,wording:CLI_WORDING});if(!parsed.values.json)return context.stdout.write(`${review.text}
`),0;let{job,result}=review,json={id:job.id,state:job.state,ended:result!==void 0,verdict:job.verdict??null,...result?{result}:{},patch:review.patch?.text??null,patchCut:review.patch?.isCut??!1};return context.stdout.write(`${JSON.stringify(json)}
`),0}};export{resultCommand};
