// The browser the shop-page test drives: Debian's `chromium` (puppeteer-core brings no browser of
// its own, and none may be downloaded here). Installed with apt-get only when missing, so a fresh
// CI machine of this kind gets it and a developer's machine is left alone.
import { spawnSync } from 'node:child_process';

export const chromiumPath = (): string | null => {
  const found = spawnSync('sh', ['-c', 'command -v chromium || command -v chromium-browser'], { encoding: 'utf8' }).stdout.trim();
  return found || process.env.CHROMIUM_PATH || null;
};

/** Installs Debian's chromium when it is not on PATH (root, or sudo without a password); returns its path or null. */
export function ensureChromium(): string | null {
  const have = chromiumPath();
  if (have) return have;
  const root = process.getuid?.() === 0;
  const sudo = root ? [] : ['sudo', '-n'];
  const run = (args: string[]) =>
    spawnSync(sudo[0] ?? args[0], [...sudo.slice(1), ...(sudo.length ? args : args.slice(1))], {
      stdio: 'inherit',
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
  process.stdout.write("chromium is missing: installing Debian's package for the shop page test\n");
  run(['apt-get', 'update', '-qq']);
  run(['apt-get', 'install', '-y', '-qq', 'chromium']);
  return chromiumPath();
}
