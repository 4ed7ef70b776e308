/** The client package's directory. */
export declare const CLIENT_DIR: URL
/** The files to write, by path under CLIENT_DIR, for an OpenAPI document. */
export declare function clientFiles(document: object): Promise<Record<string, string>>
