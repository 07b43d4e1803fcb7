/** Exit codes: success, a failure of a well-formed command, a command line that is wrong in itself. */
export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

/** The command line is wrong whatever the data: unknown command or option, a value that cannot be right. */
export class UsageError extends Error {
  override readonly name = "UsageError";
}

/** A well-formed command that cannot be carried out on the data as it is (unknown account, name taken). */
export class FailureError extends Error {
  override readonly name = "FailureError";
}
