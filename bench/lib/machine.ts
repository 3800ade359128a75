import { execFileSync } from 'node:child_process';
import { cpus, release, totalmem, type } from 'node:os';

/** Where the figures came from: they only mean something next to the machine and file system. */
export interface MachineInfo {
  readonly cpuModel: string;
  readonly cores: number;
  readonly memoryBytes: number;
  readonly os: string;
  readonly node: string;
  readonly v8: string;
  /** File system type of the bench work directory (`stat -f -c %T`, or `df -T` as a fallback). */
  readonly fileSystem: string;
  /** The block device or mount source of the work directory, when `df` tells. */
  readonly device: string;
}

/** Describes the machine and the file system holding `dir`. */
export function machineInfo(dir: string): MachineInfo {
  const list = cpus();
  return {
    cpuModel: list[0]?.model.trim() ?? 'unknown',
    cores: list.length,
    memoryBytes: totalmem(),
    os: `${type()} ${release()}`,
    node: process.version,
    v8: process.versions.v8,
    fileSystem: fileSystemType(dir),
    device: deviceOf(dir),
  };
}

function fileSystemType(dir: string): string {
  // `df -T` names ext4 where `stat -f` says "ext2/ext3" (they share a magic number); prefer it.
  try {
    const lines = execFileSync('df', ['-T', dir], { encoding: 'utf8' }).trim().split('\n');
    const type = lines[1]?.split(/\s+/)[1];
    if (type) return type;
  } catch {}
  try {
    return execFileSync('stat', ['-f', '-c', '%T', dir], { encoding: 'utf8' }).trim();
  } catch {
    return 'unknown';
  }
}

function deviceOf(dir: string): string {
  try {
    const lines = execFileSync('df', ['-P', dir], { encoding: 'utf8' }).trim().split('\n');
    return lines[1]?.split(/\s+/)[0] ?? 'unknown';
  } catch {
    return 'unknown';
  }
}
