/** The store a migration runs on. Frozen with the migrations: they may import nothing else. */
export type MigrationDialect = 'sqlite' | 'postgres'
