import { createRequire as __bannerCreateRequire } from 'node:module'; const require = __bannerCreateRequire(import.meta.url);
import{readConfig,useConfigSchemas}from"./chunk-4QEQP3VD.mjs";import{configSchema,profileSchema}from"./chunk-2LW3SY3I.mjs";useConfigSchemas({configSchema,profileSchema});var loadConfig=readConfig;export{loadConfig};
