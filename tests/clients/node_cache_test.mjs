// node-redis 5's client-side cache (RESP 3, clientSideCache) against Santral or a redis-server.
// tracking_test.py runs it with:
//   REDIS_URL  where the caching client connects (Santral, or the redis-server in --direct mode)
//   NODE_KEYS  JSON [{key, shard}]: keys on several shards, each with its shard's redis:// URL
//   SEED       the random seed of the mixed loop
// Checks: the second GET of a key is a cache hit (the cache's stats: hitCount, missCount); a SET
// by another client, and a SET directly on the key's shard, invalidate it (the 'invalidate'
// event, then the next GET is a miss with the new value); for keys on every shard; an MGET over
// every shard is one cache entry, dropped by a SET of one of its keys; 1000 mixed writes and
// reads end with every cached value equal to the server's. Exits 1 on a failure.
import { createClient } from 'redis';

const url = process.env.REDIS_URL;
const keys = JSON.parse(process.env.NODE_KEYS ?? '[]');
let seed = Number(process.env.SEED ?? 1) >>> 0 || 1;
if (!url || keys.length === 0) {
  console.error('node_cache_test: set REDIS_URL and NODE_KEYS');
  process.exit(2);
}

function random() {  // xorshift32: a replayable sequence from SEED
  seed ^= seed << 13; seed >>>= 0;
  seed ^= seed >>> 17;
  seed ^= seed << 5; seed >>>= 0;
  return seed / 4294967296;
}
const pick = (xs) => xs[Math.floor(random() * xs.length)];

let failures = 0;
function check(ok, what) {
  if (!ok) {
    failures++;
    console.log(`FAIL ${what}`);
    if (failures >= 10) {
      console.log('node-redis client-side cache: stopping after 10 failures');
      process.exit(1);
    }
  }
  return ok;
}

// Connects without reconnecting: node-redis reconnects forever when its handshake (HELLO 3,
// CLIENT SETINFO, CLIENT TRACKING ON, CLIENT MAINT_NOTIFICATIONS) fails; here that is a failure.
const clients = [];
async function connect(options, name) {
  const c = createClient({ ...options,
                           socket: { reconnectStrategy: false, connectTimeout: 5000 } });
  let firstError = null;
  c.on('error', (e) => {
    if (!firstError) console.log(`${name}: error event: ${e.message}`);
    firstError ??= e;
  });
  clients.push(c);
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error('not ready within 10 s')), 10000);
  });
  try {
    await Promise.race([c.connect(), timeout]);
  } catch (e) {
    console.log(`FAIL ${name} could not connect to ${options.url}: ` +
                (firstError?.message ?? e.message));
    process.exit(1);
  } finally {
    clearTimeout(timer);
  }
  return c;
}

const cached = await connect({ url, RESP: 3, clientSideCache: { ttl: 0, maxEntries: 0 } },
                             'caching client');
const csc = cached.clientSideCache;
if (!csc || typeof csc.stats !== 'function') {
  console.log('FAIL node-redis did not set up a client-side cache (client.clientSideCache)');
  process.exit(1);
}
const writer = await connect({ url }, 'writer');
const shards = new Map();
for (const { shard } of keys)
  if (!shards.has(shard)) shards.set(shard, await connect({ url: shard }, `shard ${shard}`));

const stats = () => csc.stats();

// Resolves true when the cache reports an invalidation of key (with orNull, also a flush of
// everything), false after ms.
function invalidation(key, ms = 5000, orNull = false) {
  return new Promise((resolve) => {
    const timer = setTimeout(() => { csc.off('invalidate', on); resolve(false); }, ms);
    function on(k) {
      if ((k === null && orNull) || (k !== null && k.toString() === key)) {
        clearTimeout(timer);
        csc.off('invalidate', on);
        resolve(true);
      }
    }
    csc.on('invalidate', on);
  });
}

async function expectGet(key, value, outcome, what) {
  const before = stats();
  const got = await cached.get(key);
  const after = stats();
  const hit = after.hitCount - before.hitCount, miss = after.missCount - before.missCount;
  check(got === value, `${what}: GET ${key} returned ${JSON.stringify(got)}, expected ` +
        `${JSON.stringify(value)}`);
  const wanted = outcome === 'hit' ? [1, 0] : [0, 1];
  check(hit === wanted[0] && miss === wanted[1],
        `${what}: GET ${key} counted ${hit} hit(s), ${miss} miss(es), expected a ${outcome}`);
}

// hit, invalidation through another client, invalidation by a write on the shard.
for (const { key, shard } of keys) {
  await writer.set(key, 'v1');
  await cached.sendCommand(['PING']);
  await expectGet(key, 'v1', 'miss', 'first read');
  await expectGet(key, 'v1', 'hit', 'second read');

  let pushed = invalidation(key);
  await writer.set(key, 'v2');
  check(await pushed, `no invalidation of ${key} within 5 s of a SET through another client`);
  await expectGet(key, 'v2', 'miss', 'read after another client\'s SET');
  await expectGet(key, 'v2', 'hit', 'read again');

  pushed = invalidation(key);
  await shards.get(shard).set(key, 'v3');
  check(await pushed, `no invalidation of ${key} within 5 s of a SET directly on ${shard}`);
  await expectGet(key, 'v3', 'miss', `read after a SET on ${shard}`);
  await expectGet(key, 'v3', 'hit', 'read again');
}
console.log(`basic: ${keys.length} keys on ${shards.size} server(s): hits, misses and ` +
            'invalidations as expected');

// MGET over keys on every shard is cached as one entry and dropped when any of its keys changes.
const names = keys.map((k) => k.key);
{
  const values = await Promise.all(names.map((k) => writer.get(k)));
  const mget = async (outcome, what) => {
    const before = stats();
    const got = await cached.mGet(names);
    const after = stats();
    check(JSON.stringify(got) === JSON.stringify(values),
          `${what}: MGET returned ${JSON.stringify(got)}, expected ${JSON.stringify(values)}`);
    const hit = after.hitCount - before.hitCount;
    check(hit === (outcome === 'hit' ? 1 : 0), `${what}: MGET was not a cache ${outcome}`);
  };
  await mget('miss', 'first MGET');
  await mget('hit', 'second MGET');
  const last = names[names.length - 1];
  const pushed = invalidation(last);
  await writer.set(last, 'mget-new');
  values[values.length - 1] = 'mget-new';
  check(await pushed, `no invalidation of ${last} within 5 s of a SET after an MGET`);
  await mget('miss', `MGET after a SET of ${last}`);
  await mget('hit', 'MGET again');
  console.log(`MGET of ${names.length} keys: cached, and invalidated by one key's SET`);
}

// 1000 mixed operations, some concurrent (node-redis pipelines what is not awaited).
const start = stats();
let ops = 0;
while (ops < 1000) {
  const batch = [];
  const n = 1 + Math.floor(random() * 6);
  for (let i = 0; i < n && ops < 1000; i++, ops++) {
    const key = pick(names), r = random();
    if (r < 0.25) batch.push(writer.set(key, String(Math.floor(random() * 1000))));
    else if (r < 0.35) batch.push(writer.incr(key).catch(() => {}));
    else if (r < 0.40) batch.push(writer.del(key));
    else if (r < 0.45) {
      const { shard } = keys.find((k) => k.key === key);
      batch.push(shards.get(shard).set(key, String(Math.floor(random() * 1000))));
    } else batch.push(cached.get(key));
  }
  await Promise.all(batch);
}
const loop = stats();
await cached.sendCommand(['PING']);

// Every key read twice: the first read may fill the cache, the second must be a hit; both
// must equal the server's value. A mismatch may wait for its invalidation (5 s), then fails.
let late = 0;
for (let pass = 0; pass < 2; pass++) {
  for (const key of names) {
    const actual = await writer.get(key);
    const before = stats();
    let got = await cached.get(key);
    const hit = stats().hitCount - before.hitCount;
    if (got !== actual) {
      const arrived = await invalidation(key, 2000, true);
      got = await cached.get(key);
      if (arrived && got === actual) late++;
    }
    check(got === actual, `after the mixed loop: ${key} cached ${JSON.stringify(got)}, the ` +
          `server holds ${JSON.stringify(actual)}`);
    if (pass === 1) check(hit === 1, `after the mixed loop: the second read of ${key} was not ` +
                          'a cache hit');
  }
}
const end = stats();
console.log(`mixed loop: ${ops} operations, ${loop.hitCount - start.hitCount} hits and ` +
            `${loop.missCount - start.missCount} misses in the loop; then ${names.length} keys ` +
            `compared twice (${end.hitCount - loop.hitCount} hits)` +
            (late ? `; ${late} invalidation(s) arrived after PING's reply` : ''));

const entries = csc.size();
for (const c of clients) await c.close();
if (failures) {
  console.log(`node-redis client-side cache: ${failures} failure(s)`);
  process.exit(1);
}
console.log(`node-redis client-side cache: all checks passed (hits ${end.hitCount}, misses ` +
            `${end.missCount}, ${entries} entries at the end)`);
