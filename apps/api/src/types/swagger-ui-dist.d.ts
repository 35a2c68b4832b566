declare module 'swagger-ui-dist' {
  /** Folder with swagger-ui's static assets. */
  export function getAbsoluteFSPath(): string;
}
