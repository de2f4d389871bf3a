/** The processes that read a variable. */
export type Reader =
  /** `npm start` / `npm run start:prod`: the HTTP and WebSocket server */
  | 'server'
  /** the GraphQL Lambda function (src/lambda/graphql.ts) */
  | 'graphql-lambda'
  /** the stream Lambda function (src/lambda/streams.ts) */
  | 'stream-lambda'
  /** the command-line scripts (`npm run seed`, `token`, ...) */
  | 'scripts'
  /** the test suite */
  | 'tests'
  /** the example client (`npm run example:client`) */
  | 'client'
  /** `npm run consumer`: standalone stream consumers */
  | 'consumer';

/** One environment variable: its type, its default, what it means, who reads it. */
export interface VarSpec {
  /**
   * `integer` is a positive integer, `count` a whole number (0 allowed), `seconds` a whole number of seconds (0 allowed), `duration`
   * seconds with an optional unit (`3600`, `30m`, `24h`, `7d`), `list` comma-separated; an array
   * lists the allowed values.
   */
  type:
    | 'string'
    | 'integer'
    | 'count'
    | 'seconds'
    | 'duration'
    | 'boolean'
    | 'port'
    | 'url'
    | 'list'
    | 'secret'
    | readonly string[];
  /** The value when the variable is unset or empty, as written in the environment. */
  default?: string;
  /** Says the default when it is not one fixed value (it depends on NODE_ENV, say). */
  defaultText?: string;
  description: string;
  /**
   * The processes that read it. For the processes with a loader (src/config/load.ts) a unit test
   * derives this from what the loader reads, and fails when it differs.
   */
  readBy: readonly Reader[];
}
