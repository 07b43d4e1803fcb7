declare module "swagger-ui-dist/absolute-path.js" {
  /** The directory of the installed swagger-ui-dist package (its own `__dirname`). */
  function absolutePath(): string;
  export = absolutePath;
}
