import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

// The MCP Inspector CLI (`npx @modelcontextprotocol/inspector --cli …`), run with this process's Node
// (it needs Node ≥ 22.19) and with its catalog and client config kept in a temporary directory.
const inspectorBin = (() => {
  const dir = path.resolve(import.meta.dirname, '../../node_modules/@modelcontextprotocol/inspector');
  const pkg = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
  return path.join(dir, pkg.bin.inspector);
})();

/** Runs the CLI with JSON output and answers the `result` of its one JSON object (or the whole object). */
export async function inspector(args: string[], whole = false): Promise<any> {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-inspector-'));
  try {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [inspectorBin, '--cli', ...args, '--format', 'json', '--stored-auth-only'],
      {
        env: {
          ...process.env,
          HOME: home,
          MCP_CATALOG_PATH: path.join(home, 'mcp.json'),
          MCP_CLIENT_CONFIG_PATH: path.join(home, 'client.json'),
        },
        timeout: 60_000,
        // Every tool with its schemas, pretty-printed: past execFile's 1 MB default since the catalogue family.
        maxBuffer: 32 * 1024 * 1024,
      },
    );
    const out = JSON.parse(stdout);
    assert.ok('result' in out, stdout);
    return whole ? out : out.result;
  } finally {
    fs.rmSync(home, { recursive: true, force: true });
  }
}
