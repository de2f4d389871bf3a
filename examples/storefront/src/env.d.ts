/// <reference types="vite/client" />
interface ImportMetaEnv {
  readonly VITE_GRAPHQL_URL?: string;
  readonly VITE_TOKEN?: string;
}
