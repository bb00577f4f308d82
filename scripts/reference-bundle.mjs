// Copies the API reference page's renderer, the one file of @scalar/api-reference the API serves
// (dist/browser/standalone.js), into a folder of its own: the production image keeps that file and
// not the package (150 MB with its framework), which is a dev dependency. The package's tarball is
// fetched alone (no dependencies) at the version the lock file names, and refused unless its
// integrity is the lock file's. Plain JS, run by bare node in the image's build stage.
//   node scripts/reference-bundle.mjs <lock file> <out dir>
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const PACKAGE = '@scalar/api-reference';
const FILE = 'dist/browser/standalone.js';

const [lockFile, outDir] = process.argv.slice(2);
if (!lockFile || !outDir) throw new Error('usage: node scripts/reference-bundle.mjs <package-lock.json> <out dir>');
const locked = JSON.parse(fs.readFileSync(lockFile, 'utf8')).packages?.[`node_modules/${PACKAGE}`];
if (!locked?.version || !locked.integrity) throw new Error(`${PACKAGE} is not in ${lockFile}`);

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'reference-bundle-'));
try {
  const [packed] = JSON.parse(
    execFileSync('npm', ['pack', `${PACKAGE}@${locked.version}`, '--json', '--pack-destination', work], { encoding: 'utf8' }),
  );
  if (packed.integrity !== locked.integrity)
    throw new Error(`${PACKAGE}@${locked.version}: integrity ${packed.integrity} is not the lock file's ${locked.integrity}`);
  execFileSync('tar', ['-xzf', path.join(work, packed.filename), '-C', work, `package/${FILE}`]);
  fs.mkdirSync(outDir, { recursive: true });
  fs.copyFileSync(path.join(work, 'package', FILE), path.join(outDir, 'standalone.js'));
  fs.writeFileSync(path.join(outDir, 'version'), `${locked.version}\n`);
} finally {
  fs.rmSync(work, { recursive: true, force: true });
}
