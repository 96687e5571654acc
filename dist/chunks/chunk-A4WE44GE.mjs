import { createRequire as __bannerCreateRequire } from 'node:module'; const require = __bannerCreateRequire(import.meta.url);
var UserError=class extends Error{name="UserError"};function errorMessage(error){return error instanceof Error?error.message:String(error)}export{UserError,errorMessage};
