import type { OrmPath, OrmRig } from './orm-path.js';

type PathFactory = (rig: OrmRig) => Promise<OrmPath>;

// Loaded when (j) runs: the seven ORMs would add seconds to the start of every other bench run.
const queryBuilders = () => import('./orm-query-builders.js');
const entityMappers = () => import('./orm-entity-mappers.js');

/** The ORM adapters of issue 19 on PostgreSQL, by the names `BENCH_ORMS` picks them with. */
export const ORM_PATHS: Readonly<Record<string, PathFactory>> = {
  kysely: async (rig) => (await queryBuilders()).kyselyPath(rig),
  knex: async (rig) => (await queryBuilders()).knexPath(rig),
  drizzle: async (rig) => (await queryBuilders()).drizzlePath(rig),
  prisma: async (rig) => (await entityMappers()).prismaPath(rig),
  typeorm: async (rig) => (await entityMappers()).typeOrmPath(rig),
  'mikro-orm': async (rig) => (await entityMappers()).mikroOrmPath(rig),
  sequelize: async (rig) => (await entityMappers()).sequelizePath(rig),
};

/** `BENCH_ORMS=kysely,knex` narrows the adapters measured (default: every one above). */
export function chosenOrms(): string[] {
  const names = process.env.BENCH_ORMS === undefined || process.env.BENCH_ORMS === '' ? Object.keys(ORM_PATHS) : process.env.BENCH_ORMS.split(',');
  const unknown = names.filter((name) => !(name in ORM_PATHS));
  if (unknown.length > 0) throw new Error(`BENCH_ORMS: unknown ${unknown.join(', ')}; known: ${Object.keys(ORM_PATHS).join(', ')}`);
  return names;
}
