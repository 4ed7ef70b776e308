-- The evaluation log's layout on PostgreSQL, measured: the table Warden creates (migration 0007)
-- against the same rows in a table range-partitioned by day on `created`, on a log seeded by
-- bench/seed.mjs. Read the timings that psql prints (\timing) and the plans' Planning and
-- Execution times.
--
--   node bench/seed.mjs --postgres 'postgres://…/db?options=-c%20search_path%3Dlog10m' \
--     --applications 0 --policies 0 --evaluations 10000000
--   psql 'postgres://…/db' -v schema=log10m -f bench/evaluation-log-pg-layout.sql
--
-- It copies the log (minutes, and as much disk again) and, at the end, deletes its oldest day
-- from Warden's table: run it on a store kept for benchmarks only.
\set ON_ERROR_STOP on
\timing on
set search_path = :schema;
select count(*) as entries, min(created) as oldest, max(created) as newest from evaluations;
select seq as app from applications where id = 'log-bench' \gset

\echo '== 1. Warden''s layout: one table, a B-tree per filter'
explain (analyze, summary) select e.seq, e.created, e.doc from evaluations e
  where e.app_seq = :app order by e.created desc, e.seq desc limit 51;
explain (analyze, summary) select e.seq, e.created, e.doc from evaluations e
  where e.app_seq = :app and e.verdict = 'fail' order by e.created desc, e.seq desc limit 51;
explain (analyze, summary) select e.seq, e.created, e.doc from evaluation_policies p join evaluations e on e.seq = p.seq
  where p.app_seq = :app and p.policy_id = 'tone' order by p.created desc, p.seq desc limit 51;
select id as some_id from evaluations order by seq limit 1 offset 5000000 \gset
explain (analyze, summary) select doc from evaluations where id = :'some_id' and app_seq = :app;

\echo '== 2. The same rows, range-partitioned by day on created'
drop table if exists evaluations_daily;
create table evaluations_daily (
  seq bigint not null, id text not null, app_seq bigint not null, created bigint not null,
  verdict text not null, doc text not null, primary key (seq, created)
) partition by range (created);
select format('create table evaluations_daily_%s partition of evaluations_daily for values from (%s) to (%s)',
              d, d * 86400, (d + 1) * 86400)
  from generate_series((select min(created) / 86400 from evaluations), (select max(created) / 86400 + 2 from evaluations)) d
\gexec
insert into evaluations_daily select seq, id, app_seq, created, verdict, doc from evaluations;
create index on evaluations_daily (app_seq, created, seq);
create index on evaluations_daily (app_seq, verdict, created, seq);
-- A unique id is impossible across partitions without the partition key: a plain index each.
create index on evaluations_daily (id);
analyze evaluations_daily;
select count(*) as partitions from pg_inherits where inhparent = 'evaluations_daily'::regclass;
explain (analyze, summary) select e.seq, e.created, e.doc from evaluations_daily e
  where e.app_seq = :app order by e.created desc, e.seq desc limit 51;
explain (analyze, summary) select e.seq, e.created, e.doc from evaluations_daily e
  where e.app_seq = :app and e.verdict = 'fail' order by e.created desc, e.seq desc limit 51;
explain (analyze, summary) select doc from evaluations_daily where id = :'some_id' and app_seq = :app;

\echo '== 3. Retention of the oldest day: a partition dropped, against batches of 1,000 deleted'
select min(created) / 86400 as oldest_day from evaluations \gset
select count(*) as rows_in_oldest_day from evaluations where created < (:oldest_day + 1) * 86400;
select pg_current_wal_lsn() as wal_before \gset
select format('drop table evaluations_daily_%s', :oldest_day) \gexec
select pg_size_pretty(pg_wal_lsn_diff(pg_current_wal_lsn(), :'wal_before')) as wal_written_by_the_drop;
select pg_current_wal_lsn() as wal_before \gset
-- What Warden's retention does (src/services/evaluation-log.service.ts), in one procedure:
-- the oldest 1,000 by sequence, their policy rows and themselves, one transaction each.
do $$
declare
  cutoff bigint := (select (min(created) / 86400 + 1) * 86400 from evaluations);
  first_seq bigint; last_seq bigint;
begin
  loop
    select min(seq), max(seq) into first_seq, last_seq from (
      select seq, created from evaluations where seq > coalesce(last_seq, 0) order by seq limit 1000
    ) w where w.created < cutoff;
    exit when first_seq is null;
    delete from evaluation_policies where seq between first_seq and last_seq and created < cutoff;
    delete from evaluations where seq between first_seq and last_seq and created < cutoff;
    commit;
  end loop;
end $$;
select pg_size_pretty(pg_wal_lsn_diff(pg_current_wal_lsn(), :'wal_before')) as wal_written_by_the_deletes;
drop table evaluations_daily;
