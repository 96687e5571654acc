import { createRequire as __bannerCreateRequire } from 'node:module'; const require = __bannerCreateRequire(import.meta.url);
function shellQuote(text){return`'${text.replaceAll("'","'\\''")}'`}export{shellQuote};
