declare module 'swagger-ui-dist/absolute-path.js' {
  /** Folder with swagger-ui's static assets (this entry avoids loading the 1 MB browser bundle). */
  export default function getAbsoluteFSPath(): string;
}
