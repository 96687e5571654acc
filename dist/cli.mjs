import { createRequire as __bannerCreateRequire } from 'node:module'; const require = __bannerCreateRequire(import.meta.url);
import{describeFileSystemError}from"./chunks/chunk-MVOHHWLP.mjs";import{resolvePluginRoot}from"./chunks/chunk-VHSBA67Q.mjs";import{VERSION}from"./chunks/chunk-ZXCULHFN.mjs";import{inCliWords}from"./chunks/chunk-QAOIP57B.mjs";import{resolveDataHome,resolveProjectDir}from"./chunks/chunk-54QLYERL.mjs";import{UserError,errorMessage}from"./chunks/chunk-AEK6PQGZ.mjs";import"./chunks/chunk-5J7RWOGQ.mjs";var COMMANDS={doctor:async()=>(await import("./chunks/doctor-command-CM6ZKVXG.mjs")).doctorCommand,"provider-key":async()=>(await import("./chunks/copilot-login-command-J2XOKITG.mjs")).withCopilotLogin((await import("./chunks/provider-key-command-RVDLSMWI.mjs")).providerKeyCommand),"copilot-login":async()=>(await import("./chunks/copilot-login-command-J2XOKITG.mjs")).copilotLoginCommand,"approve-project":async()=>(await import("./chunks/approve-project-command-IET7SZWJ.mjs")).approveProjectCommand,statusline:async()=>(await import("./chunks/statusline-command-2QQGHKIA.mjs")).statuslineCommand,run:async()=>(await import("./chunks/run-command-KHG6ZMLT.mjs")).runCommand,explore:async()=>(await import("./chunks/explore-command-EBOCG5VK.mjs")).exploreCommand,tasks:async()=>(await import("./chunks/tasks-command-EUBSVYF3.mjs")).tasksCommand,wait:async()=>(await import("./chunks/wait-command-J3BNBEOR.mjs")).waitCommand,result:async()=>(await import("./chunks/result-command-VKAGLBQP.mjs")).resultCommand,cancel:async()=>(await import("./chunks/cancel-command-GU3LOCQ2.mjs")).cancelCommand,cleanup:async()=>(await import("./chunks/cleanup-command-UQUDUE4O.mjs")).cleanupCommand,watch:async()=>(await import("./chunks/watch-command-5VOG2NYC.mjs")).watchCommand,usage:async()=>(await import("./chunks/usage-command-Q6TBO7ZO.mjs")).usageCommand,scoreboard:async()=>(await import("./chunks/scoreboard-command-I4M6Z42M.mjs")).scoreboardCommand,subagent:async()=>(await import("./chunks/subagent-command-37OT3U6M.mjs")).subagentCommand,uninstall:async()=>(await import("./chunks/uninstall-command-PJJTLAO6.mjs")).uninstallCommand};async function main(argv){let[name,...args]=argv,context={env:process.env,dataHome:resolveDataHome(process.env),projectDir:resolveProjectDir(process.env,process.cwd()),pluginRoot:resolvePluginRoot(process.env,import.meta.url),stdin:process.stdin,stderr:process.stderr,stdout:process.stdout,now:()=>new Date};if(name==="--version"||name==="-V")return context.stdout.write(`delegate ${VERSION}
`),0;if(!name||name==="--help"||name==="-h"||name==="help")return(name?context.stdout:context.stderr).write(await usage()),name?0:2;let load=COMMANDS[name];if(!load)return context.stderr.write(`delegate: unknown command "${name}".
${await usage()}`),2;let command=await load();return asksForHelp(args)?(context.stdout.write(`Usage: delegate ${command.usage}

${command.summary}.

${command.help}
`),0):command.run(args,context)}function asksForHelp(args){let end=args.indexOf("--");return(end===-1?args:args.slice(0,end)).some(arg=>arg==="--help"||arg==="-h")}async function usage(){let lines=await Promise.all(Object.values(COMMANDS).map(async load=>{let command=await load();return`  delegate ${command.usage}
      ${command.summary}`}));return`delegate ${VERSION}: hand work to other models from Claude Code or a terminal.

Usage:
${lines.join(`
`)}

delegate <command> --help shows a command in detail; delegate --version, its version.
`}for(let stream of[process.stdout,process.stderr])stream.on("error",error=>{if(error.code!=="EPIPE")throw error;process.exit(0)});main(process.argv.slice(2)).then(code=>{process.exitCode=code},error=>{let fileProblem=describeFileSystemError(error,resolveDataHome(process.env));process.stderr.write(error instanceof UserError?`delegate: ${inCliWords(error.message)}
`:fileProblem?`delegate: ${fileProblem}
`:`delegate: internal error: ${error.stack??errorMessage(error)}
`),process.exitCode=1});
