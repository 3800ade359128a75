// Node's parseArgs explains its errors for programmers ("To specify a positional argument starting with a '-', place
// it at the end of the command after '--'…"); the CLI says the same in a few words of its own.

/** A one-line message for an error thrown by `util.parseArgs`. */
export function parseArgsMessage(error: unknown): string {
  const { code, message } = error as { code?: string; message?: string };
  const option = /'(-{1,2}[^'\s]*)/.exec(message ?? '')?.[1];
  switch (code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION':
      return option === undefined ? 'unknown option' : `unknown option ${option}`;
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE':
      if (option !== undefined && /does not take an argument/.test(message ?? '')) return `${option} takes no value`;
      return option === undefined ? 'an option is missing its value' : `${option} needs a value`;
    default:
      return 'cannot read the command line';
  }
}
