import { spawn } from 'node:child_process';
import { join } from 'node:path';

/**
 * Runs `node [flags] bench/child/<script> args…` and returns the JSON object the child prints as its last stdout
 * line. Rejects with the child's stderr when it fails.
 */
export function runChild<T>(
  root: string,
  script: string,
  args: readonly string[],
  flags: readonly string[] = [],
): Promise<T> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...flags, join(root, 'bench', 'child', script), ...args], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, NODE_OPTIONS: '' },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
    });
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (code !== 0) {
        reject(new Error(`child ${script} ${args.join(' ')} failed (${code ?? signal}): ${stderr.trim()}`));
        return;
      }
      const last = stdout.trim().split('\n').pop() ?? '';
      try {
        resolve(JSON.parse(last) as T);
      } catch {
        reject(new Error(`child ${script} printed no JSON result: ${stdout.slice(-500)} ${stderr.slice(-500)}`));
      }
    });
  });
}
