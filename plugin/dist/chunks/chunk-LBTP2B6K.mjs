import { createRequire as __bannerCreateRequire } from 'node:module'; const require = __bannerCreateRequire(import.meta.url);
function formatUsd(amount){let digits={minimumFractionDigits:2,maximumFractionDigits:4};return`$${amount.toLocaleString("en-US",{...digits,useGrouping:!1})}`}export{formatUsd};
