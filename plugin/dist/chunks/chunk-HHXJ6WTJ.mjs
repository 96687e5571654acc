import { createRequire as __bannerCreateRequire } from 'node:module'; const require = __bannerCreateRequire(import.meta.url);
import{parseArgs}from"node:util";function parseCli(args,options,usage,context){try{let{values,positionals}=parseArgs({args:[...args],options,allowPositionals:!0,strict:!0});return{values,positionals}}catch(error){let name=usage.split(" ")[0]??"";context.stderr.write(`delegate ${name}: ${parseProblem(error)} (see delegate ${name} --help)
`);return}}function usageError(context,message,usage){return context.stderr.write(`delegate: ${message}
Usage: delegate ${usage}
`),2}function parseProblem(error){let option=/'(-[^']*)'/.exec(error.message)?.[1];switch(error.code){case"ERR_PARSE_ARGS_UNKNOWN_OPTION":return`unknown option ${option??""}`.trim();case"ERR_PARSE_ARGS_INVALID_OPTION_VALUE":return option?`option ${option.split(/[ ,]/)[0]} takes a value`:error.message;default:return error.message}}export{parseCli,usageError};
