// Fails when the committed bundles differ from a fresh build (run after `npm run build`).
import { execFileSync } from 'node:child_process';

const status = execFileSync('git', ['status', '--porcelain', '--', 'plugin/dist'], {
  encoding: 'utf8',
});
if (status.trim()) {
  process.stderr.write(
    `plugin/dist/ differs from a fresh build of the sources:\n${status}\n` +
      'Run `npm run build` and commit plugin/dist/: plugin installs use the committed bundles.\n',
  );
  process.exit(1);
}
process.stdout.write('plugin/dist/ matches the sources.\n');
