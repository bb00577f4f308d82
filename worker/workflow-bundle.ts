// The workflow bundle, built once outside the worker process (scripts/bundle-workflows.ts, run by
// the stack launcher before it starts the worker) and verified by the worker before it runs it.
//
// Why: `bundleWorkflowCode` runs webpack; inside the worker it added about 150 MB to the worker's
// resident memory at start-up, and it stayed through the run. Temporal's production advice is to
// bundle ahead and start the worker with `workflowBundle: { codePath }`.
//
// Staleness: next to the bundle lies a manifest with the SHA-256 of every file webpack read to make
// it (workflows, the domain modules they import, the SDK files), the paths it probed and did not
// find inside the project, the SDK version and the bundle's own hash. The bundle is used only when
// every one of those still matches, so an edited workflow is never run from an old bundle.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode } from '@temporalio/worker';

const require = createRequire(import.meta.url);
const root = fileURLToPath(new URL('..', import.meta.url));
const MANIFEST_VERSION = 1;

export const workflowsPath = require.resolve('../workflows/index.ts');
export const bundleDir = process.env.WORKFLOW_BUNDLE_DIR ?? path.join(root, '.build');
export const bundlePath = path.join(bundleDir, 'workflow-bundle.js');
const manifestPath = path.join(bundleDir, 'workflow-bundle.json');

interface Manifest {
  version: number;
  sdk: string;
  workflowsPath: string;
  bundle: string;
  files: Record<string, string>;
  missing: string[];
}

const sdkVersion = (): string =>
  (JSON.parse(fs.readFileSync(require.resolve('@temporalio/worker/package.json'), 'utf8')) as { version: string }).version;
const sha256 = (data: string | Buffer) => crypto.createHash('sha256').update(data).digest('hex');
const hashFile = (file: string): string | null => {
  try {
    return sha256(fs.readFileSync(file));
  } catch {
    return null;
  }
};

/** Why the bundle on disk cannot be used, or null when it is current. */
export function staleReason(): string | null {
  let m: Manifest;
  try {
    m = JSON.parse(fs.readFileSync(manifestPath, 'utf8')) as Manifest;
  } catch {
    return `no bundle at ${bundlePath}`;
  }
  if (m.version !== MANIFEST_VERSION || m.sdk !== sdkVersion() || m.workflowsPath !== workflowsPath)
    return 'bundle made by another SDK version or layout';
  if (hashFile(bundlePath) !== m.bundle) return 'bundle file does not match its manifest';
  for (const [file, hash] of Object.entries(m.files))
    if (hashFile(file) !== hash) return `${path.relative(root, file)} changed since the bundle was made`;
  for (const file of m.missing) if (fs.existsSync(file)) return `${path.relative(root, file)} appeared since the bundle was made`;
  return null;
}

const quiet = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} };

/**
 * Bundles the workflows and writes bundle and manifest (each by rename, so a reader never sees half a
 * file). A failed write (read-only checkout) is returned, not thrown: the code is still good to run.
 */
export async function buildWorkflowBundle(): Promise<{ code: string; ms: number; writeError?: Error }> {
  // A source saved while webpack ran could be hashed newer than what was bundled: bundle again.
  for (let attempt = 1; ; attempt++) {
    const startedAt = Date.now();
    const built = await bundleOnce();
    const changed = built.inputs.find((f) => (fs.statSync(f, { throwIfNoEntry: false })?.mtimeMs ?? Infinity) >= startedAt - 1000);
    if (!changed) return built.save();
    if (attempt === 3)
      return { code: built.code, ms: built.ms, writeError: new Error(`${changed} kept changing while bundling; bundle not saved`) };
  }
}

async function bundleOnce() {
  const t0 = performance.now();
  const files = new Set<string>();
  const missing = new Set<string>();
  const { code } = await bundleWorkflowCode({
    workflowsPath,
    logger: quiet as never,
    webpackConfigHook: (config) => ({
      ...config,
      plugins: [
        ...(config.plugins ?? []),
        {
          apply(compiler: {
            hooks: {
              afterCompile: {
                tap(name: string, fn: (c: { fileDependencies: Iterable<string>; missingDependencies: Iterable<string> }) => void): void;
              };
            };
          }) {
            compiler.hooks.afterCompile.tap('svc-bundle-inputs', (compilation) => {
              for (const f of compilation.fileDependencies) files.add(f);
              for (const f of compilation.missingDependencies) missing.add(f);
            });
          },
        },
      ],
    }),
  });
  const manifest: Manifest = {
    version: MANIFEST_VERSION,
    sdk: sdkVersion(),
    workflowsPath,
    bundle: sha256(code),
    files: Object.fromEntries(
      [...files].sort().flatMap((f) => {
        const h = fs.statSync(f, { throwIfNoEntry: false })?.isFile() ? hashFile(f) : null;
        return h ? [[f, h]] : [];
      }),
    ),
    // Probes inside the project only (a new `x.ts` beside an imported `x.js` would change the result).
    missing: [...missing].filter((f) => f.startsWith(root) && !f.includes(`${path.sep}node_modules`)).sort(),
  };
  const ms = Math.round(performance.now() - t0);
  const save = (): { code: string; ms: number; writeError?: Error } => {
    const write = (file: string, text: string) => {
      const tmp = `${file}.${process.pid}.tmp`;
      fs.writeFileSync(tmp, text);
      fs.renameSync(tmp, file);
    };
    try {
      fs.mkdirSync(bundleDir, { recursive: true });
      write(bundlePath, code);
      write(manifestPath, `${JSON.stringify(manifest, null, 1)}\n`);
    } catch (err) {
      return { code, ms, writeError: err as Error };
    }
    return { code, ms };
  };
  return { code, ms, inputs: Object.keys(manifest.files), save };
}
