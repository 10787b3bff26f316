// The same small interface over each client library, in its cluster and standalone forms,
// written the way each library's documentation shows it.
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Subscribes with `subscribe(onMessage)`, publishes 0..n-1 through `publish`, and waits for them.
async function hear(n, subscribe, publish) {
  const heard = [];
  await subscribe((message) => heard.push(String(message)));
  await sleep(200);
  for (let i = 0; i < n; i++) await publish(String(i));
  const until = Date.now() + 5000;
  while (heard.length < n && Date.now() < until) await sleep(20);
  return heard;
}

async function ioredis(mode, seeds) {
  const { default: Redis } = await import('ioredis');
  const options = { maxRetriesPerRequest: 2, connectTimeout: 2000, lazyConnect: false };
  const make = () =>
    mode === 'cluster'
      ? new Redis.Cluster(seeds, { redisOptions: options, slotsRefreshTimeout: 2000,
                                   clusterRetryStrategy: () => 200 })
      : new Redis({ ...seeds[0], ...options });
  const r = make();
  r.on('error', () => {});
  const masters = () => (mode === 'cluster' ? r.nodes('master') : [r]);
  return {
    set: (k, v) => r.set(k, v),
    get: (k) => r.get(k),
    del: (keys) => Promise.all(keys.map((k) => r.del(k))),
    hset: (k, o) => r.hset(k, o),
    hgetall: (k) => r.hgetall(k),
    rpush: (k, vs) => r.rpush(k, ...vs),
    lrange: (k) => r.lrange(k, 0, -1),
    zadd: (k, s, m) => r.zadd(k, s, m),
    zrange: (k) => r.zrange(k, 0, -1),
    incr: (k) => r.incr(k),
    pipeline: async (a, b, v) => {
      // exec() resolves with [error, result] per command: a command that failed (its router
      // died mid-pipeline) was not acknowledged, so the pipeline is tried again.
      const out = await r.pipeline().set(a, v).set(b, v).get(a).exec();
      const failed = out.find(([e]) => e);
      if (failed) throw failed[0];
      return out[2][1];
    },
    mset: (pairs) => r.mset(Object.fromEntries(pairs)),
    mget: (keys) => r.mget(keys),
    transaction: async (a, b) => {
      const out = await r.multi().incr(a).incr(b).exec();
      if (!out || out.some(([e]) => e)) throw new Error('EXEC failed');
    },
    pubsub: async (channel, n) => {
      const sub = make();
      sub.on('error', () => {});
      try {
        return await hear(n, async (on) => {
          sub.on('message', (ch, m) => ch === channel && on(m));
          await sub.subscribe(channel);
        }, (m) => r.publish(channel, m));
      } finally {
        sub.disconnect();
      }
    },
    scan: async (pattern) => {
      const keys = new Set();
      for (const node of masters()) {
        let cursor = '0';
        do {
          const [next, batch] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
          batch.forEach((k) => keys.add(k));
          cursor = next;
        } while (cursor !== '0');
      }
      return keys;
    },
    close: async () => r.disconnect(),
  };
}

async function nodeRedis(mode, seeds) {
  const { createClient, createCluster } = await import('redis');
  // A node that stays away is given up after a few tries, and commands for it fail at once
  // instead of waiting in its offline queue.
  const socket = { connectTimeout: 2000,
                   reconnectStrategy: (n) => (n > 3 ? new Error('gave up') : 100 * n) };
  const make = () =>
    mode === 'cluster'
      ? createCluster({ rootNodes: seeds.map((s) => ({ socket: { ...s, ...socket } })),
                        defaults: { socket, disableOfflineQueue: true } })
      : createClient({ socket: { ...seeds[0], ...socket } });
  const connected = async () => {
    const client = make();
    client.on('error', () => {});
    await client.connect();
    return client;
  };
  let r = await connected();
  const masters = async () =>
    mode === 'cluster' ? Promise.all(r.masters.map((m) => r.nodeClient(m))) : [r];
  return {
    set: (k, v) => r.set(k, v),
    get: (k) => r.get(k),
    del: (keys) => Promise.all(keys.map((k) => r.del(k))),
    hset: (k, o) => r.hSet(k, o),
    hgetall: async (k) => ({ ...(await r.hGetAll(k)) }),
    rpush: (k, vs) => r.rPush(k, vs),
    lrange: (k) => r.lRange(k, 0, -1),
    zadd: (k, s, m) => r.zAdd(k, { score: s, value: m }),
    zrange: (k) => r.zRange(k, 0, -1),
    incr: (k) => r.incr(k),
    // Commands sent together are pipelined by node-redis.
    pipeline: async (a, b, v) => (await Promise.all([r.set(a, v), r.set(b, v), r.get(a)]))[2],
    mset: (pairs) => r.mSet(pairs),
    mget: (keys) => r.mGet(keys),
    transaction: async (a, b) => {
      await r.multi().incr(a).incr(b).exec();
    },
    pubsub: async (channel, n) => {
      const sub = await connected();
      try {
        return await hear(n, (on) => sub.subscribe(channel, on), (m) => r.publish(channel, m));
      } finally {
        await sub.close().catch(() => {});
      }
    },
    scan: async (pattern) => {
      const keys = new Set();
      for (const node of await masters())
        for await (const batch of node.scanIterator({ MATCH: pattern, COUNT: 1000 }))
          (Array.isArray(batch) ? batch : [batch]).forEach((k) => keys.add(k));
      return keys;
    },
    close: () => r.close(),
    // node-redis's cluster client finds new nodes only when told MOVED or ASK: when a node
    // it knows stays away, the application makes the client again, which asks the topology.
    recover: async () => {
      if (mode !== 'cluster') return;
      const old = r;
      r = await connected();
      old.destroy();
    },
  };
}

async function glide(mode, seeds) {
  const g = await import('@valkey/valkey-glide');
  const { GlideClient, GlideClusterClient, Batch, ClusterBatch, ClusterScanCursor } = g;
  const addresses = mode === 'cluster' ? seeds : [seeds[0]];
  const make = (extra = {}) =>
    mode === 'cluster'
      // Santral never answers MOVED, which is what makes glide look at the topology again
      // after a node went away: it checks every second instead (docs/compatibility.md).
      ? GlideClusterClient.createClient({ addresses, requestTimeout: 2000,
                                          periodicChecks: { duration_in_sec: 1 }, ...extra })
      : GlideClient.createClient({ addresses, requestTimeout: 2000, ...extra });
  const r = await make();
  const text = (v) => (v == null ? null : String(v));
  return {
    set: (k, v) => r.set(k, v),
    get: async (k) => text(await r.get(k)),
    del: (keys) => Promise.all(keys.map((k) => r.del([k]))),
    hset: (k, o) => r.hset(k, o),
    hgetall: async (k) =>
      Object.fromEntries((await r.hgetall(k)).map(({ field, value }) => [String(field), String(value)])),
    rpush: (k, vs) => r.rpush(k, vs),
    lrange: async (k) => (await r.lrange(k, 0, -1)).map(String),
    zadd: (k, s, m) => r.zadd(k, [{ element: m, score: s }]),
    zrange: async (k) => (await r.zrange(k, { start: 0, end: -1 })).map(String),
    incr: (k) => r.incr(k),
    pipeline: async (a, b, v) => {
      const batch = (mode === 'cluster' ? new ClusterBatch(false) : new Batch(false))
        .set(a, v).set(b, v).get(a);
      return text((await r.exec(batch, true))[2]);
    },
    mset: (pairs) => r.mset(Object.fromEntries(pairs)),
    mget: async (keys) => (await r.mget(keys)).map(text),
    transaction: async (a, b) => {
      const batch = (mode === 'cluster' ? new ClusterBatch(true) : new Batch(true)).incr(a).incr(b);
      if ((await r.exec(batch, true)) == null) throw new Error('EXEC failed');
    },
    pubsub: async (channel, n) => {
      const heard = [];
      const Modes = mode === 'cluster'
        ? g.GlideClusterClientConfiguration.PubSubChannelModes
        : g.GlideClientConfiguration.PubSubChannelModes;
      const sub = await make({ pubsubSubscriptions: {
        channelsAndPatterns: { [Modes.Exact]: new Set([channel]) },
        callback: (msg) => heard.push(String(msg.message)) } });
      try {
        await sleep(300);
        for (let i = 0; i < n; i++) await r.publish(String(i), channel);
        const until = Date.now() + 5000;
        while (heard.length < n && Date.now() < until) await sleep(20);
        return heard;
      } finally {
        sub.close();
      }
    },
    scan: async (pattern) => {
      const keys = new Set();
      if (mode === 'cluster') {
        let cursor = new ClusterScanCursor();
        while (!cursor.isFinished()) {
          const [next, batch] = await r.scan(cursor, { match: pattern, count: 1000 });
          batch.forEach((k) => keys.add(String(k)));
          cursor = next;
        }
      } else {
        let cursor = '0';
        do {
          const [next, batch] = await r.scan(cursor, { match: pattern, count: 1000 });
          batch.forEach((k) => keys.add(String(k)));
          cursor = String(next);
        } while (cursor !== '0');
      }
      return keys;
    },
    close: async () => r.close(),
  };
}

export async function adapter(client, mode, seeds) {
  const make = { ioredis, 'node-redis': nodeRedis, glide }[client];
  if (!make) throw new Error(`CLIENT must be ioredis, node-redis or glide, not ${client}`);
  return make(mode, seeds);
}
