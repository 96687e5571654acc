import { createRequire as __bannerCreateRequire } from 'node:module'; const require = __bannerCreateRequire(import.meta.url);
import{parseArgs}from"node:util";function parseCli(args,options,usage,context){try{let{values,positionals}=parseArgs({args:[...args],options,allowPositionals:!0,strict:!0});return{values,positionals}}catch(error){context.stderr.write(`delegate: ${error.message}
Usage: delegate ${usage}
`);return}}function usageError(context,message,usage){return context.stderr.write(`delegate: ${message}
Usage: delegate ${usage}
`),2}export{parseCli,usageError};
