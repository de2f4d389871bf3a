/// <reference types="vite/client" />
interface ImportMetaEnv {
  /** The API, when not this origin's /graphql (Vite's dev proxy). */
  readonly VITE_GRAPHQL_URL?: string;
  /** The token endpoint, when not the API's development sign-in. */
  readonly VITE_SIGN_IN_URL?: string;
}
