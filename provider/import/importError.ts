/** An error of the user's making (credentials, files, keys): shown as is, without the usage text (exit 1). */
export class ImportError extends Error {}
