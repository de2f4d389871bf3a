/**
 * The command line of every command of the project (the server, the consumer, scripts/ and
 * bench/): node:util's parseArgs, plus the two answers each command gives the same way.
 *
 * - `--help` (or `-h`), anywhere on the line: the command's usage on stdout, exit 0.
 * - A usage error (an unknown flag, a flag without its value, an argument the command does not
 *   take, a value it refuses): one line on stderr, `<name>: <what is wrong> (<how to see the
 *   usage>)`, exit 2. Never a stack trace: a person mistyped a flag, nothing failed.
 */
import { parseArgs } from 'node:util';
import type { ParseArgsOptionsConfig } from 'node:util';

export interface Command<O extends ParseArgsOptionsConfig = ParseArgsOptionsConfig> {
  /** The name a usage error starts with, e.g. `migrate`. */
  name: string;
  /** How a person runs it, flags to follow, e.g. `npm run migrate --`. */
  run: string;
  /** The usage, as `--help` prints it: its flags on the first line (may be empty), then what it does and each flag. */
  usage: string;
  options?: O;
  /** Whether it takes arguments besides flags (default false: any is a usage error). */
  allowPositionals?: boolean;
}

/** A value the command refuses (`--rcu -1`): main turns it into the one-line usage error. */
export class UsageError extends Error {
  override name = 'UsageError';
}

const HELP = new Set(['--help', '-h']);

/**
 * The usage as `--help` prints it: `usage:`, how to run it and the first line of `usage` (its
 * flags; without any, the command alone), then the rest of `usage`.
 */
export function usageText(command: Pick<Command, 'run' | 'usage'>): string {
  const [synopsis = '', ...rest] = command.usage.split('\n');
  const run = synopsis.trim() ? `${command.run} ${synopsis.trim()}` : command.run.replace(/ --$/, '');
  return `usage: ${run}\n${rest.join('\n').trimEnd()}\n`;
}

/**
 * The flags and arguments of `argv` (default: this process's), or the process ends: with the
 * usage for `--help`, with a usage error for anything `command` does not take.
 */
export function parseCommandLine<O extends ParseArgsOptionsConfig>(
  command: Command<O>,
  argv: string[] = process.argv.slice(2),
) {
  const flags = argv.slice(0, argv.includes('--') ? argv.indexOf('--') : argv.length);
  if (flags.some((arg) => HELP.has(arg))) {
    process.stdout.write(usageText(command));
    process.exit(0);
  }
  try {
    return parseArgs({
      args: argv,
      options: command.options ?? ({} as O),
      allowPositionals: command.allowPositionals ?? false,
      strict: true,
    });
  } catch (error) {
    return exitWithUsageError(command, describeParseError(error));
  }
}

/** Prints the one-line usage error and exits 2. */
export function exitWithUsageError(command: Pick<Command, 'name' | 'run'>, message: string): never {
  process.stderr.write(`${command.name}: ${message} (${command.run} --help shows the usage)\n`);
  process.exit(2);
}

/** parseArgs's messages, shortened to what was wrong (its advice about `--` does not apply here). */
function describeParseError(error: unknown): string {
  const { code, message } = error as { code?: string; message: string };
  const quoted = /'([^']*)'/.exec(message)?.[1] ?? '';
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') return `unknown flag ${quoted}`;
  if (code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL') return `unexpected argument "${quoted}"`;
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
    const flag = quoted.split(' ')[0] ?? quoted;
    return message.includes('argument missing') ? `${flag} needs a value` : `${flag} takes no value`;
  }
  return message.split('\n')[0] ?? message;
}
