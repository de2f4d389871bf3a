/** The part of negotiator's API (the package has no types of its own) the HTTP handler uses. */
declare module 'negotiator' {
  export default class Negotiator {
    constructor(request: { headers: Record<string, string | undefined> });
    /** The most preferred of `available` by the request's Accept header; undefined when none is acceptable. */
    mediaType(available?: string[]): string | undefined;
  }
}
