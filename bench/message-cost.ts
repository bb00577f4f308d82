// The cost of a message where it is paid (issue 31): each process's CPU, the write-ahead log's
// bytes and records, and the database's statements and round trips, per message, with the
// statements grouped by the step of a message's life they belong to. Used by bench/campaign.ts.
import type pg from 'pg';

export interface WalMark {
  lsn: string;
  bytes: number;
  records: number;
  fpi: number;
}

/** The messages table's update counts so far (pg_stat_user_tables). */
export async function messageUpdatesNow(pool: pg.Pool) {
  const r = (
    await pool.query(`select n_tup_upd::bigint as upd, n_tup_hot_upd::bigint as hot from pg_stat_user_tables where relname = 'messages'`)
  ).rows[0];
  return { upd: Number(r?.upd ?? 0), hot: Number(r?.hot ?? 0) };
}

/** Where the write-ahead log stands now (pg_stat_wal counts every backend's records). */
export async function walNow(pool: pg.Pool): Promise<WalMark> {
  const r = (
    await pool.query(
      `select pg_current_wal_lsn()::text as lsn, wal_bytes::bigint as bytes, wal_records::bigint as records, wal_fpi::bigint as fpi from pg_stat_wal`,
    )
  ).rows[0];
  return { lsn: r.lsn, bytes: Number(r.bytes), records: Number(r.records), fpi: Number(r.fpi) };
}

/**
 * The step of a message's life a statement belongs to, by its text. The webhook outbox's rows are
 * written inside the status moves' statements, so the outbox shows in the WAL by table, not here.
 */
const STEPS: Array<[step: string, test: RegExp]> = [
  ['transaction', /^\s*(begin|commit|rollback|savepoint|release|start transaction)\b/i],
  ['record', /insert into messages .*campaign_id, contact_id/is],
  ['dispatch claim', /dispatch_claim|message_dispatch/i],
  ['record', /from contacts c|campaigns|wallet|blacklist|from accounts|from channels/is],
  ['provider budget', /rate_limit_windows/i],
  ['status move after the provider call', /v\(key bigint/i],
  ['receipt', /v\(key text/i],
  ['campaign view (the bench polling)', /count\(\*\) filter/i],
];
const stepOf = (query: string) => STEPS.find(([, re]) => re.test(query))?.[0] ?? 'other';

const per = (n: number, messages: number, digits = 3) => Math.round((n / messages) * 10 ** digits) / 10 ** digits;

export async function costPerMessage(
  pool: pg.Pool,
  o: {
    messages: number;
    cpu: Record<string, number>;
    walAtStart: WalMark;
    walAtEnd: WalMark;
    statements: boolean;
    walDetail: boolean;
    tablesAtStart?: { upd: number; hot: number };
  },
) {
  const n = Math.max(1, o.messages);
  // The simulator stands in for the provider: its CPU is not ours, and is shown apart.
  const ours = Object.entries(o.cpu).filter(([k]) => k !== 'simulator');
  const cpuMs = Object.fromEntries(ours.map(([k, v]) => [k, per(v * 1000, n)]));
  const out: Record<string, unknown> = {
    messages: o.messages,
    cpuMs: { ...cpuMs, total: per(ours.reduce((s, [, v]) => s + v, 0) * 1000, n), simulatorApart: per((o.cpu.simulator ?? 0) * 1000, n) },
    wal: {
      bytes: per(o.walAtEnd.bytes - o.walAtStart.bytes, n, 0),
      records: per(o.walAtEnd.records - o.walAtStart.records, n, 1),
      fullPageImages: per(o.walAtEnd.fpi - o.walAtStart.fpi, n, 3),
      totalMb: Math.round((o.walAtEnd.bytes - o.walAtStart.bytes) / 1048576),
    },
  };
  if (o.statements) {
    const rows = (
      await pool.query<{ query: string; calls: string; ms: number; rows: string }>(
        `select query, calls::bigint as calls, total_exec_time + total_plan_time as ms, rows::bigint as rows from pg_stat_statements
          where dbid = (select oid from pg_database where datname = current_database())`,
      )
    ).rows;
    const steps = new Map<string, { calls: number; ms: number; rows: number }>();
    for (const r of rows) {
      const s = steps.get(stepOf(r.query)) ?? { calls: 0, ms: 0, rows: 0 };
      s.calls += Number(r.calls);
      s.ms += Number(r.ms);
      s.rows += Number(r.rows);
      steps.set(stepOf(r.query), s);
    }
    const calls = rows.reduce((s, r) => s + Number(r.calls), 0);
    out.statements = {
      // Every statement is a round trip (a pipelined batch would not be, and there is none).
      perMessage: per(calls, n, 4),
      executionMsPerMessage: per(
        rows.reduce((s, r) => s + Number(r.ms), 0),
        n,
        4,
      ),
      bySteps: Object.fromEntries(
        [...steps.entries()]
          .sort((a, b) => b[1].ms - a[1].ms)
          .map(([k, v]) => [
            k,
            { calls: v.calls, callsPerMessage: per(v.calls, n, 4), msPerMessage: per(v.ms, n, 4), rowsPerMessage: per(v.rows, n, 2) },
          ]),
      ),
      top: rows
        .sort((a, b) => b.ms - a.ms)
        .slice(0, 12)
        .map((r) => ({
          step: stepOf(r.query),
          calls: Number(r.calls),
          ms: Math.round(r.ms),
          rows: Number(r.rows),
          query: r.query.replace(/\s+/g, ' ').slice(0, 140),
        })),
    };
  }
  // How many of the messages' updates stayed on their page without new index entries (HOT).
  const t = (
    await pool.query(
      `select n_tup_ins::bigint as ins, n_tup_upd::bigint as upd, n_tup_hot_upd::bigint as hot from pg_stat_user_tables where relname = 'messages'`,
    )
  ).rows[0];
  if (t && o.tablesAtStart) {
    const upd = Number(t.upd) - o.tablesAtStart.upd;
    out.messageUpdates = {
      perMessage: per(upd, n, 2),
      hotShare: upd ? Math.round(((Number(t.hot) - o.tablesAtStart.hot) / upd) * 100) / 100 : null,
    };
  }
  if (o.walDetail) await walDetail(pool, o, n, out).catch((err: Error) => (out.walDetailError = err.message));
  return out;
}

async function walDetail(pool: pg.Pool, o: { walAtStart: WalMark; walAtEnd: WalMark }, n: number, out: Record<string, unknown>) {
  {
    await pool.query('create extension if not exists pg_walinspect');
    const range = [o.walAtStart.lsn, o.walAtEnd.lsn];
    // By resource manager: heap rows, index entries, transaction commits, full-page images.
    out.walByKind = Object.fromEntries(
      (
        await pool.query(
          `select "resource_manager/record_type" as rm, count::bigint as records, combined_size::bigint as bytes, fpi_size::bigint as fpi
             from pg_get_wal_stats($1::pg_lsn, $2::pg_lsn) where count > 0 order by combined_size desc`,
          range,
        )
      ).rows.map((r) => [
        r.rm,
        { records: per(Number(r.records), n, 2), bytes: per(Number(r.bytes), n, 0), fpiBytes: per(Number(r.fpi), n, 0) },
      ]),
    );
    // By table and index: each record counted once, under the first block it touches.
    // An array: relations without a name (a catalog's file number) would sort first as object keys.
    out.walByRelation = (
      await pool.query(
        `select coalesce(c.relname, b.relfilenode::text) as rel, count(*) filter (where b.block_id = 0)::bigint as records,
                  sum(case when b.block_id = 0 then b.record_length else 0 end)::bigint as bytes, sum(b.block_fpi_length)::bigint as fpi
             from pg_get_wal_block_info($1::pg_lsn, $2::pg_lsn) b left join pg_class c on c.relfilenode = b.relfilenode
            group by 1 order by 3 desc limit 25`,
        range,
      )
    ).rows
      .filter((r) => Number(r.bytes) / n >= 1)
      .map((r) => ({
        relation: r.rel,
        records: per(Number(r.records), n, 2),
        bytes: per(Number(r.bytes), n, 0),
        fpiBytes: per(Number(r.fpi), n, 0),
      }));
  }
}

/**
 * The floor of one provider HTTP exchange on this machine, measured in the same run: a bare
 * node:http server in a process of its own answering a small form POST with 204, and an undici
 * client in this one posting `requests` of them over `connections` keep-alive connections. A
 * message costs us one such exchange as the client (its send) and two as the server (its
 * callbacks), so these bound what our processes can spend per message.
 */
export async function httpExchangeFloor(requests = 20_000, connections = 32) {
  const { spawn } = await import('node:child_process');
  const fs = await import('node:fs');
  const { Agent, request } = await import('undici');
  const server = spawn(
    process.execPath,
    [
      '-e',
      `const s=require('node:http').createServer((q,r)=>{q.resume();q.on('end',()=>{r.writeHead(204);r.end()})});s.keepAliveTimeout=10000;s.listen(0,'127.0.0.1',()=>process.stdout.write(String(s.address().port)+'\\n'))`,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  try {
    const port = await new Promise<number>((resolve) => server.stdout!.once('data', (d: Buffer) => resolve(Number(String(d).trim()))));
    const procCpu = () => {
      const f = fs.readFileSync(`/proc/${server.pid}/stat`, 'utf8');
      const x = f.slice(f.lastIndexOf(')') + 2).split(' ');
      return (Number(x[11]) + Number(x[12])) / 100;
    };
    const agent = new Agent({ connections, keepAliveTimeout: 10_000 });
    const body = 'MessageSid=SM00000000000000000000000000000000&MessageStatus=delivered&To=%2B255700000001&From=%2B15005550006';
    const post = async () => {
      const r = await request(`http://127.0.0.1:${port}/status?m=msg_0000000000000000000000`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body,
        dispatcher: agent,
      });
      await r.body.dump();
    };
    for (let i = 0; i < 1000; i++) await post(); // warm-up
    const serverAt = procCpu();
    const clientAt = process.cpuUsage();
    let next = 0;
    await Promise.all(
      Array.from({ length: connections }, async () => {
        while (next++ < requests) await post();
      }),
    );
    const client = process.cpuUsage(clientAt);
    const serverUs = (procCpu() - serverAt) * 1e6;
    await agent.close();
    return {
      requests,
      serverMicrosecondsPerRequest: Math.round(serverUs / requests),
      clientMicrosecondsPerRequest: Math.round((client.user + client.system) / requests),
    };
  } finally {
    server.kill();
  }
}
