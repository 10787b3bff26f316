// Santral's dashboard: polls the admin API's JSON pages and draws them. No framework, no
// build step: plain DOM and hand-drawn SVG. Served by the admin listener from the binary.
//
//   every REFRESH_MS: /stats /shards /shards/info /hotkeys /config, and /reshard /routers
//   (panels shown only where the router answers them) ──► rates from the change since the
//   last sample ──► shard cards, load bars, hot keys, header
//   when the map version changes: /placement ──► one drawing per namespace, and the
//   namespaces offered as analysis targets
//   on Analyze: /analyze (answers once its window is over) ──► the shard-key report
'use strict';

(() => {
  const REFRESH_MS = 1500;
  const HISTORY = 60000 / REFRESH_MS + 1;  // a shard's sparkline: one minute of rates
  const OPTIONAL_RETRY = 10;  // an optional page that answered 404 is asked again this many refreshes later
  const SVG = 'http://www.w3.org/2000/svg';
  const PALETTE = ['#4e79a7', '#f28e2b', '#59a14f', '#e15759', '#76b7b2', '#edc948', '#b07aa1',
                   '#ff9da7', '#9c755f', '#bab0ac', '#1f77b4', '#2ca02c', '#d62728', '#9467bd'];

  let token = null;        // the admin token: this tab's memory only (never storage, never a URL)
  let tokenPrompt = null;  // the prompt in progress, shared by every request that met a 401
  let previous = null;     // the last sample, for rates
  let placementVersion = null;
  let shardNames = [];     // in map order: a shard's colour is its place in the map
  const history = new Map();  // shard name -> recent requests/s
  const optionalMissing = new Map();  // path -> refreshes until asked again
  let refreshes = 0;
  let costBytes = 0;

  const $ = (id) => document.getElementById(id);

  // ---- talking to the admin API -------------------------------------------------------------

  class NotServed extends Error {}

  // A page that answered an error: its status, and the {"error": ...} it said, if it did.
  class Refused extends Error {
    constructor(path, status, text) {
      super(`${path}: HTTP ${status} ${text}`);
      this.status = status;
      try {
        this.reason = JSON.parse(text).error || text;
      } catch {
        this.reason = text;
      }
    }
  }

  // `counted`: whether the answer's bytes go into this refresh's cost (an analysis's do not).
  async function api(path, counted = true) {
    for (;;) {
      const headers = token === null ? {} : {Authorization: 'Bearer ' + token};
      const response = await fetch(path, {headers, cache: 'no-store'});
      if (response.status === 401) {
        await askToken(token !== null);
        continue;
      }
      if (response.status === 404) throw new NotServed(path);
      const text = await response.text();
      if (counted) costBytes += text.length;
      if (!response.ok) throw new Refused(path, response.status, text);
      return JSON.parse(text);
    }
  }

  // Pages that only some routers serve (resharding, the fleet): null where not served.
  async function optional(path) {
    const wait = optionalMissing.get(path) || 0;
    if (wait > 0) {
      optionalMissing.set(path, wait - 1);
      return null;
    }
    try {
      return await api(path);
    } catch (e) {
      if (!(e instanceof NotServed)) throw e;
      optionalMissing.set(path, OPTIONAL_RETRY);
      return null;
    }
  }

  // One prompt however many requests were refused at once; resolves once a token is entered.
  function askToken(refused) {
    if (tokenPrompt === null) {
      tokenPrompt = new Promise((resolve) => {
        const dialog = $('token-dialog');
        $('token-error').hidden = !refused;
        $('token-input').value = '';
        $('token-form').onsubmit = (event) => {
          event.preventDefault();
          token = $('token-input').value;
          $('token-input').value = '';
          dialog.close();
          tokenPrompt = null;
          resolve();
        };
        dialog.showModal();
      });
    }
    return tokenPrompt;
  }

  // ---- helpers ------------------------------------------------------------------------------

  function el(tag, attrs = {}, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attrs)) {
      if (name === 'class') node.className = value;
      else if (name === 'text') node.textContent = value;
      else node.setAttribute(name, value);
    }
    for (const child of children) if (child !== null && child !== undefined) node.append(child);
    return node;
  }

  function svg(tag, attrs = {}, text) {
    const node = document.createElementNS(SVG, tag);
    for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, value);
    if (text !== undefined) node.textContent = text;
    return node;
  }

  const colour = (shard) => {
    const index = typeof shard === 'number' ? shard : shardNames.indexOf(shard);
    return index < 0 ? '#888' : PALETTE[index % PALETTE.length];
  };

  function chip(shard, text) {
    const node = el('span', {class: 'chip', text: text === undefined ? shard : text});
    node.style.borderColor = colour(shard);
    const dot = el('i');
    dot.style.background = colour(shard);
    node.prepend(dot);
    return node;
  }

  const number = (n) => (n === undefined || n === null || Number.isNaN(n) ? '–'
    : n >= 100 ? Math.round(n).toLocaleString('en-US') : (Math.round(n * 10) / 10).toLocaleString('en-US'));

  function bytes(n) {
    if (n === undefined || n === null) return '–';
    const units = ['B', 'kB', 'MB', 'GB', 'TB'];
    let i = 0;
    while (n >= 1024 && i < units.length - 1) {
      n /= 1024;
      i++;
    }
    return `${i === 0 ? n : n.toFixed(1)} ${units[i]}`;
  }

  const ms = (seconds) => (seconds === undefined ? '–' : seconds * 1000 >= 10
    ? `${(seconds * 1000).toFixed(0)} ms` : `${(seconds * 1000).toFixed(2)} ms`);

  function duration(seconds) {
    seconds = Math.max(0, Math.round(seconds));
    if (seconds < 60) return `${seconds} s`;
    if (seconds < 3600) return `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
    const hours = Math.floor(seconds / 3600);
    return hours < 48 ? `${hours} h ${Math.floor(seconds / 60) % 60} min` : `${Math.floor(hours / 24)} days`;
  }

  function replace(container, ...children) {
    container.replaceChildren(...children.filter((c) => c !== null && c !== undefined));
  }

  // ---- one refresh ------------------------------------------------------------------------

  async function refresh() {
    const started = performance.now();
    costBytes = 0;
    let requests = 7;
    try {
      const [stats, shards, info, hot, config, reshard, routers] = await Promise.all([
        api('/stats'), api('/shards'), api('/shards/info').catch(() => null), api('/hotkeys?count=15').catch(() => null),
        api('/config'), optional('/reshard'), optional('/routers')]);
      shardNames = shards.shards.map((s) => s.name);
      if (config.version !== placementVersion) {
        drawPlacement(await api('/placement'));
        placementVersion = config.version;
        requests++;
      }
      const now = performance.now() / 1000;
      const rates = ratesOf(stats, now);
      drawHeader(stats, config, rates);
      drawShards(shards, info, stats, rates);
      drawHotKeys(hot);
      drawLimits(stats.limits);
      drawReshard(reshard);
      drawFleet(routers, config.version);
      refreshes++;
      document.body.dataset.refreshes = String(refreshes);
      const took = performance.now() - started;
      $('status').textContent = `updated ${new Date().toLocaleTimeString()}`;
      $('status').className = 'status ok';
      $('cost').textContent = `this refresh: ${requests} requests, ${bytes(costBytes)} of JSON, ` +
        `${took.toFixed(0)} ms; every ${REFRESH_MS / 1000} s`;
    } catch (e) {
      $('status').textContent = `cannot reach the admin API: ${e.message}`;
      $('status').className = 'status error';
    }
    setTimeout(refresh, REFRESH_MS);
  }

  // Per second, from the change since the previous sample: each shard server's requests and
  // errors, and all commands.
  function ratesOf(stats, now) {
    const sample = {time: now, servers: {}, commands: 0, hits: 0, misses: 0};
    for (const [name, s] of Object.entries(stats.total.shards)) sample.servers[name] = s;
    for (const c of Object.values(stats.total.commands)) sample.commands += c.calls;
    sample.hits = stats.total.near_cache.hits;
    sample.misses = stats.total.near_cache.misses;
    const rates = {servers: {}, commands: null, hits: null, misses: null};
    if (previous !== null && now > previous.time) {
      const dt = now - previous.time;
      const per = (a, b) => Math.max(0, (a - b) / dt);
      for (const [name, s] of Object.entries(sample.servers)) {
        const before = previous.servers[name];
        if (before) rates.servers[name] = {requests: per(s.requests, before.requests), errors: per(s.errors, before.errors)};
      }
      rates.commands = per(sample.commands, previous.commands);
      rates.hits = per(sample.hits, previous.hits);
      rates.misses = per(sample.misses, previous.misses);
    }
    previous = sample;
    return rates;
  }

  function drawHeader(stats, config, rates) {
    $('version').textContent = stats.version;
    $('map-version').textContent = String(config.version);
    $('uptime').textContent = duration(stats.uptime_seconds);
    $('clients').textContent = number(stats.connected_clients);
    $('commands-rate').textContent = number(rates.commands);
    const cache = stats.total.near_cache;
    $('near-cache').textContent = cache.keys === 0 && cache.hits === 0 ? 'empty'
      : `${number(rates.hits)} hits/s, ${number(cache.keys)} keys, ${bytes(cache.bytes)}`;
    const last = config.last_reload;
    const reload = $('last-reload');
    if (!last) {
      reload.textContent = 'none since start';
      reload.className = '';
    } else {
      const ago = duration(Date.now() / 1000 - last.unix_time);
      reload.textContent = `${last.ok ? 'ok' : 'rejected'} (${last.trigger}, ${ago} ago): ${last.message}`;
      reload.className = last.ok ? 'ok' : 'error';
    }
  }

  // A server's state as every worker sees it: down if any says down, connecting if any does.
  function serverStates(shard) {
    const servers = new Map();
    for (const s of shard.servers) {
      const seen = servers.get(s.name) || {name: s.name, address: s.address, role: s.role, state: 'up', reason: '', in_flight: 0};
      const rank = {up: 0, connecting: 1, down: 2};
      if ((rank[s.state] ?? 2) > (rank[seen.state] ?? 2) || seen.state === undefined) {
        seen.state = s.state;
        seen.reason = s.reason;
      }
      seen.in_flight += s.in_flight;
      servers.set(s.name, seen);
    }
    return [...servers.values()];
  }

  // A shard's requests/s over the last minute, newest on the right, with a caption that says
  // so. A rate needs two refreshes: until then the caption says there is no data yet, and
  // while the minute fills it says how much the line covers.
  function sparkline(values) {
    const width = 120, height = 28;
    const line = svg('svg', {class: 'spark', width, height, viewBox: `0 0 ${width} ${height}`});
    line.append(svg('title', {}, 'requests/s over the last minute'));
    line.append(svg('line', {x1: 0, x2: width, y1: height - 1.5, y2: height - 1.5, class: 'baseline'}));
    const box = el('span', {class: 'spark-box'}, el('span', {class: 'spark-caption'}), line);
    const seconds = Math.round((values.length - 1) * REFRESH_MS / 1000);
    if (values.length < 2) {
      box.dataset.state = 'waiting';
      box.firstChild.textContent = 'req/s, 1 min: no data yet';
      return box;
    }
    box.dataset.state = values.length < HISTORY ? 'filling' : 'full';
    box.firstChild.textContent = values.length < HISTORY ? `req/s, last ${seconds} s` : 'req/s, last minute';
    const max = Math.max(1, ...values);
    const step = width / (HISTORY - 1);  // the newest sample on the right
    const points = values.map((v, i) => `${(width - (values.length - 1 - i) * step).toFixed(1)},${(height - 2 - v / max * (height - 4)).toFixed(1)}`);
    line.append(svg('polyline', {points: points.join(' '), fill: 'none', stroke: 'currentColor', 'stroke-width': 1.5}));
    return box;
  }

  // A shard that follows Sentinel: its master's name and the last switch Santral followed.
  function failoverLine(shard) {
    const f = shard.last_failover;
    const text = f
      ? `last failover ${new Date(f.unix_time * 1000).toISOString().replace('.000', '')}: ${f.from} → ${f.to}`
      : 'no failover since start';
    return el('p', {class: 'failover muted', text: `Sentinel master ${shard.sentinel_master} · ${text}`});
  }

  // The shard's last failover whose new primary lacks writes of the old one, and what became of
  // writes to it since.
  function lostWritesLine(shard) {
    const l = shard.lost_writes;
    const when = new Date(l.unix_time * 1000).toISOString().replace('.000', '');
    const writes = {
      refused: `writes refused until SANTRAL FAILOVER ACCEPT ${shard.name}; reads are served`,
      served: 'writes go on (failover.on_lost_writes: accept)',
      accepted: 'accepted by an operator',
    }[l.writes] || l.writes;
    return el('p', {class: `lost-writes ${l.writes === 'accepted' ? 'muted' : 'reason'}`,
      text: `Lost writes (${l.lineage}) at ${when}: ${l.from} → ${l.to}: ${l.why} · ${writes}`});
  }

  function drawShards(shards, info, stats, rates) {
    const cards = [];
    const load = [];
    shards.shards.forEach((shard, index) => {
      const servers = serverStates(shard);
      const primary = servers.find((s) => s.role === 'primary') || {name: shard.name, state: 'connecting', reason: ''};
      const replicas = servers.filter((s) => s.role === 'replica');
      const statsOf = (s) => stats.total.shards[s.name] || {requests: 0, errors: 0, timeouts: 0, latency: {}};
      const rateOf = (s) => rates.servers[s.name] || {requests: null, errors: null};
      let requestsRate = null, errorsRate = null, requests = 0, errors = 0, timeouts = 0;
      for (const s of servers) {
        const r = rateOf(s);
        if (r.requests !== null) {
          requestsRate = (requestsRate || 0) + r.requests;
          errorsRate = (errorsRate || 0) + r.errors;
        }
        requests += statsOf(s).requests;
        errors += statsOf(s).errors;
        timeouts += statsOf(s).timeouts;
      }
      const past = history.get(shard.name) || [];
      if (requestsRate !== null) past.push(requestsRate);
      while (past.length > HISTORY) past.shift();
      history.set(shard.name, past);
      load.push({name: shard.name, rate: requestsRate || 0});

      const keyspace = info && info.shards[index] && info.shards[index].name === shard.name ? info.shards[index] : null;
      const card = el('article', {class: `card shard state-${primary.state}`, 'data-shard': shard.name});
      card.style.borderTopColor = colour(index);
      const stateLine = el('p', {class: 'state'},
        el('span', {class: `badge ${primary.state}`, text: primary.state}),
        ` ${shard.address}`, primary.reason ? el('span', {class: 'reason', text: ` ${primary.reason}`}) : null);
      const figures = el('dl', {class: 'figures'},
        figure('requests/s', number(requestsRate), 'rate'),
        figure('requests', number(requests), 'requests-total'),
        figure('errors/s', number(errorsRate), errorsRate > 0 ? 'bad' : ''),
        figure('errors', `${number(errors)}${timeouts ? ` (${number(timeouts)} timed out)` : ''}`, errors > 0 ? 'bad' : ''),
        figure('p99', ms(statsOf(primary).latency.p99_seconds), 'p99'),
        figure('in flight', number(servers.reduce((a, s) => a + s.in_flight, 0))),
        figure('keys', keyspace && keyspace.answered ? number(keyspace.keys) : '–', 'keys'),
        figure('memory', keyspace && keyspace.answered ? bytes(keyspace.used_memory) +
          (keyspace.maxmemory ? ` of ${bytes(keyspace.maxmemory)}` : '') : '–', 'memory'));
      const replicaList = el('ul', {class: 'replicas'});
      for (const r of replicas) {
        const rate = rateOf(r).requests;
        const lag = r.lag_ms >= 0 ? `, lag ${number(r.lag_ms)} ms` : '';
        replicaList.append(el('li', {class: 'replica'},
          el('span', {class: `badge ${r.state}`, text: r.state}),
          ` replica ${r.address}: ${number(rate)} req/s, p99 ${ms(statsOf(r).latency.p99_seconds)}${lag}`,
          r.reads === false ? el('span', {class: 'reason', text: ` no reads: ${r.sync}`}) : null,
          r.reason ? el('span', {class: 'reason', text: ` ${r.reason}`}) : null));
      }
      if (replicas.length === 0) replicaList.append(el('li', {class: 'muted', text: 'no replicas'}));
      const title = el('h3', {}, el('span', {class: 'name', text: shard.name}), sparkline(past));
      cards.push(card);
      card.append(title, stateLine, figures, replicaList);
      if (shard.sentinel_master) card.append(failoverLine(shard));
      if (shard.lost_writes) card.append(lostWritesLine(shard));
      if (keyspace && !keyspace.answered && keyspace.error)
        card.append(el('p', {class: 'reason', text: `INFO: ${keyspace.error}`}));
    });
    replace($('shards'), ...cards);
    drawLoadBars(load);
  }

  function figure(label, value, cls = '') {
    return el('div', {class: cls}, el('dt', {text: label}), el('dd', {text: value}));
  }

  // Each shard's share of the requests per second, as bars: the hot shard stands out.
  function drawLoadBars(load) {
    const bars = $('load-bars');
    const rowHeight = 18, labelWidth = 90, width = 640;
    bars.setAttribute('viewBox', `0 0 ${width} ${load.length * rowHeight + 4}`);
    bars.setAttribute('height', String(load.length * rowHeight + 4));
    const total = load.reduce((a, l) => a + l.rate, 0);
    const max = Math.max(1, ...load.map((l) => l.rate));
    const children = [];
    load.forEach((l, i) => {
      const y = i * rowHeight + 2;
      children.push(svg('text', {x: 0, y: y + 13, class: 'label'}, l.name));
      children.push(svg('rect', {x: labelWidth, y, height: rowHeight - 4, rx: 2,
        width: Math.max(1, (width - labelWidth - 170) * l.rate / max).toFixed(1), fill: colour(i)}));
      const share = total > 0 ? ` (${(100 * l.rate / total).toFixed(0)}%)` : '';
      children.push(svg('text', {x: width - 165, y: y + 13, class: 'value'}, `${number(l.rate)} req/s${share}`));
    });
    bars.replaceChildren(...children);
  }

  function drawHotKeys(hot) {
    const body = $('hotkeys').tBodies[0];
    // The hottest 15 and every salted counter besides, hot or not (/hotkeys lists them so).
    const keys = hot ? hot.hotkeys : [];
    $('hotkeys-empty').hidden = keys.length > 0;
    $('hotkeys').hidden = keys.length === 0;
    const rows = keys.map((k) => {
      const spread = el('td', {class: 'spread'});
      if (k.salted > 0) {
        spread.append(el('span', {class: 'badge salted', text: `salted ×${k.salted}${k.salted_by ? ` (${k.salted_by})` : ''}`}));
        const list = el('span', {class: 'sub-keys'});
        for (const sub of k.sub_keys || []) {
          const item = chip(sub.shard, `${sub.key} → ${sub.shard}`);
          item.classList.add('sub-key');
          item.dataset.subKey = sub.key;
          item.dataset.shard = sub.shard;
          list.append(item);
        }
        spread.append(list);
      }
      if (k.cached) spread.append(el('span', {class: 'badge cached', text: 'near-cached'}));
      if (!k.salted && !k.cached) spread.append(el('span', {class: 'muted', text: 'one shard'}));
      return el('tr', {'data-key': k.key},
        el('td', {class: 'key', text: k.key}), el('td', {text: number(k.ops_per_sec)}),
        el('td', {text: number(k.reads_per_sec)}), el('td', {text: number(k.writes_per_sec)}),
        el('td', {}, chip(k.shard)), spread);
    });
    replace(body, ...rows);
  }

  // Each user and namespace with limits: what they are, and what each refused (by limit).
  function drawLimits(limits) {
    const rows = [];
    for (const [of, list] of [['user', limits ? limits.users : []], ['namespace', limits ? limits.namespaces : []]]) {
      for (const l of list) {
        const refused = [['requests_per_s', l.refused_requests], ['max_connections', l.refused_connections],
          ['max_pipeline', l.refused_pipeline]].filter(([, n]) => n > 0).map(([what, n]) => `${number(n)} by ${what}`);
        rows.push(el('tr', {'data-limits': `${of}:${l.name}`, class: refused.length ? 'refusing' : ''},
          el('td', {text: of}), el('td', {text: l.name}),
          el('td', {text: l.requests_per_s ? `${number(l.requests_per_s)} (${number(l.burst)})` : '–'}),
          el('td', {text: of === 'user' ? `${number(l.connections)}${l.max_connections ? ` of ${number(l.max_connections)}` : ''}` : '–'}),
          el('td', {text: l.max_pipeline ? number(l.max_pipeline) : '–'}),
          el('td', {class: 'refused', text: refused.length ? refused.join(', ') : 'none'})));
      }
    }
    $('limits-panel').hidden = rows.length === 0;
    replace($('limits').tBodies[0], ...rows);
  }

  // ---- placement --------------------------------------------------------------------------

  function drawPlacement(placement) {
    shardNames = placement.shards;
    replace($('legend'), ...placement.shards.map((name) => chip(name)));
    replace($('analyze-targets'), ...placement.namespaces.map((ns) =>
      el('option', {value: ns.name, label: `${ns.match} · ${ns.strategy}`})));
    const cards = [];
    for (const ns of placement.namespaces) cards.push(namespaceCard(ns, placement));
    cards.push(defaultCard(placement));
    replace($('placement'), ...cards);
  }

  function card(title, subtitle, ...drawings) {
    return el('article', {class: 'card placement-card'}, el('h3', {text: title}),
      el('p', {class: 'muted', text: subtitle}), ...drawings);
  }

  function namespaceCard(ns, placement) {
    const names = placement.shards;
    const key = ns.shard_key ? `shard key {${ns.shard_key}}` : 'the whole key';
    const title = `${ns.name} · ${ns.strategy}`;
    const hashed = ns.hash ? ` · ${ns.hash}, ${ns.vnodes} points per unit of weight` : '';
    const subtitle = `${ns.match} · ${key}${hashed}`;
    switch (ns.strategy) {
      case 'hashed':
        return card(title, subtitle, ringDrawing(ns.ring, names));
      case 'slots':
        return card(title, subtitle, slotsDrawing(ns.slot_ranges, names));
      case 'range':
        return card(title, `${subtitle} · ${ns.order} order`, rangeDrawing(ns.ranges, names));
      case 'directory': {
        const groups = el('ul', {class: 'groups'}, ...ns.groups.map((g) =>
          el('li', {}, el('code', {text: g.group}), ' → ', chip(names[g.shard]))));
        const fallback = ns.fallback === 'slots' ? slotsDrawing(ns.slot_ranges, names) : ringDrawing(ns.ring, names, 150);
        return card(title, subtitle, el('p', {text: 'listed groups:'}), groups,
          el('p', {text: `other groups: ${ns.fallback}`}), fallback);
      }
      case 'zone': {
        const zones = el('div', {class: 'zones'}, ...ns.zones.map((z) => {
          const groups = ns.groups.filter((g) => g.zone === z.name).map((g) => g.group);
          return el('div', {class: 'zone'},
            el('h4', {text: `zone ${z.name}${z.name === ns.default_zone ? ' (default)' : ''}`}),
            ringDrawing(z.ring, names, 120),
            el('p', {}, ...z.shards.map((s) => chip(names[s]))),
            el('p', {class: 'muted', text: groups.length ? `groups: ${groups.join(', ')}` : 'no listed groups'}));
        }));
        return card(title, subtitle, zones);
      }
      default:
        return card(title, subtitle);
    }
  }

  function defaultCard(placement) {
    const d = placement.default;
    const title = `keys of no namespace · ${d.distribution}`;
    const subtitle = `hash ${d.hash}${placement.hash_tag ? ` · hash tag ${placement.hash_tag}` : ''}`;
    if (d.ring) return card(title, subtitle, ringDrawing(d.ring, placement.shards));
    if (d.modula_slots) {
      const ranges = [];
      d.modula_slots.forEach((shard, slot) => ranges.push({from: slot, to: slot, shard}));
      return card(title, `${subtitle} · hash mod ${d.modula_slots.length}`, slotsDrawing(ranges, placement.shards, d.modula_slots.length));
    }
    return card(title, `${subtitle} · every key to a shard picked at random`);
  }

  // The ring as a donut: each arc coloured by the shard that owns it, the share beside it.
  function ringDrawing(ring, names, size = 200) {
    const box = el('div', {class: 'drawing ring'});
    const drawing = svg('svg', {class: 'placement ring', width: size, height: size, viewBox: '-1.1 -1.1 2.2 2.2'});
    box.append(drawing);
    if (!ring || ring.arcs.length === 0) return box;
    const full = 4294967296;
    const share = new Map();
    const angle = (v) => (v / full) * 2 * Math.PI - Math.PI / 2;
    const point = (a, r) => `${(r * Math.cos(a)).toFixed(4)} ${(r * Math.sin(a)).toFixed(4)}`;
    let start = ring.arcs[ring.arcs.length - 1][0] - full;  // the first arc wraps past zero
    const wedge = (from, to, shard) => {
      const d = `M${point(from, 1)} A1 1 0 0 1 ${point(to, 1)} L${point(to, 0.62)} A0.62 0.62 0 0 0 ${point(from, 0.62)}Z`;
      drawing.append(svg('path', {d, fill: colour(shard)}));
    };
    for (const [end, shard] of ring.arcs) {
      const from = angle(start), to = angle(end);
      if (to - from > Math.PI) {  // an arc is drawn in halves: one SVG arc cannot close a circle
        wedge(from, (from + to) / 2, shard);
        wedge((from + to) / 2, to, shard);
      } else {
        wedge(from, to, shard);
      }
      share.set(shard, (share.get(shard) || 0) + (end - start) / full);
      start = end;
    }
    drawing.append(svg('text', {x: 0, y: 0.08, class: 'ring-label', 'text-anchor': 'middle'}, `${ring.points} points`));
    const legend = el('ul', {class: 'shares'});
    for (const [shard, part] of [...share.entries()].sort((a, b) => a[0] - b[0]))
      legend.append(el('li', {}, chip(names[shard]), ` ${(part * 100).toFixed(1)}% of the hash space`));
    box.append(legend);
    return box;
  }

  // Slot ranges on a bar from 0 to 16383, labelled where there is room.
  function slotsDrawing(ranges, names, count = 16384) {
    const width = 320, height = 46;
    const drawing = svg('svg', {class: 'placement slots', width: '100%', viewBox: `0 0 ${width} ${height}`});
    for (const r of ranges) {
      const x = r.from / count * width, w = (r.to - r.from + 1) / count * width;
      drawing.append(svg('rect', {x: x.toFixed(2), y: 0, width: Math.max(w, 0.5).toFixed(2), height: 26, fill: colour(r.shard)}));
      if (w > 40) {
        drawing.append(svg('text', {x: (x + w / 2).toFixed(1), y: 17, class: 'in-bar', 'text-anchor': 'middle'},
          `${names[r.shard]}`));
        drawing.append(svg('text', {x: (x + 2).toFixed(1), y: 40, class: 'tick'}, String(r.from)));
      }
    }
    drawing.append(svg('text', {x: width - 2, y: 40, class: 'tick', 'text-anchor': 'end'}, String(count - 1)));
    return el('div', {class: 'drawing'}, drawing,
      el('ul', {class: 'ranges'}, ...ranges.length <= 16 ? ranges.map((r) =>
        el('li', {}, `slots ${r.from}–${r.to} → `, chip(names[r.shard]))) : []));
  }

  // Key ranges side by side (their widths say nothing: keys have no scale), boundaries below.
  function rangeDrawing(ranges, names) {
    const width = 320, height = 48;
    const drawing = svg('svg', {class: 'placement ranges', width: '100%', viewBox: `0 0 ${width} ${height}`});
    const w = width / Math.max(1, ranges.length);
    ranges.forEach((r, i) => {
      drawing.append(svg('rect', {x: (i * w).toFixed(1), y: 0, width: (w - 1).toFixed(1), height: 26, fill: colour(r.shard)}));
      drawing.append(svg('text', {x: (i * w + w / 2).toFixed(1), y: 17, class: 'in-bar', 'text-anchor': 'middle'}, names[r.shard]));
      const anchor = i === 0 ? 'start' : 'middle';
      drawing.append(svg('text', {x: (i * w + (i === 0 ? 2 : 0)).toFixed(1), y: 42, class: 'tick', 'text-anchor': anchor},
        r.from === null ? '−∞' : r.from));
    });
    const last = ranges[ranges.length - 1];
    drawing.append(svg('text', {x: width - 2, y: 42, class: 'tick', 'text-anchor': 'end'},
      last && last.to !== null ? last.to : '+∞'));
    return el('div', {class: 'drawing'}, drawing, el('ul', {class: 'ranges'}, ...ranges.map((r) =>
      el('li', {}, `[${r.from === null ? '−∞' : r.from}, ${r.to === null ? '+∞' : r.to}) → `, chip(names[r.shard])))));
  }

  // ---- resharding and the fleet (shown only where the router serves them) ------------------

  function drawReshard(reshard) {
    const panel = $('reshard-panel');
    // Idle, the panel stays only to show conflicts a move kept apart (santral:conflict:<key>).
    if (!reshard || (reshard.state === 'idle' && !(reshard.conflicts > 0))) {
      panel.hidden = true;
      return;
    }
    panel.hidden = false;
    const total = reshard.units_total || 0, done = reshard.units_done || 0;
    const fraction = total > 0 ? done / total : 0;
    const bar = el('div', {class: 'progress', role: 'progressbar', 'aria-valuemin': '0',
      'aria-valuemax': String(total), 'aria-valuenow': String(done)});
    const fill = el('div', {class: 'progress-fill'});
    fill.style.width = `${(fraction * 100).toFixed(1)}%`;
    bar.append(fill, el('span', {class: 'progress-text', text: `${done} of ${total} units (${(fraction * 100).toFixed(0)}%)`}));
    const figures = el('dl', {class: 'figures'},
      figure('state', reshard.state, 'reshard-state'),
      figure('to map version', String(reshard.map_version ?? '–')),
      figure('keys moved', number(reshard.keys_moved)),
      figure('bytes moved', bytes(reshard.bytes_moved)),
      figure('keys/s', number(reshard.keys_per_sec)),
      figure('ETA', reshard.eta_s === undefined || reshard.eta_s === null ? '–' : duration(reshard.eta_s)),
      figure('errors', number(reshard.errors), reshard.errors > 0 ? 'bad' : ''),
      figure('conflicts kept', number(reshard.conflicts || 0), reshard.conflicts > 0 ? 'bad' : ''));
    const moves = el('table', {class: 'moves'},
      el('thead', {}, el('tr', {}, ...['unit', 'from', 'to', 'keys (est.)', 'bytes (est.)', ''].map((h) => el('th', {text: h})))),
      el('tbody', {}, ...(reshard.moves || []).map((m) => el('tr', {class: m.done ? 'done' : ''},
        el('td', {text: m.unit}), el('td', {}, chip(m.from)), el('td', {}, chip(m.to)),
        el('td', {text: number(m.keys_estimated)}), el('td', {text: bytes(m.bytes_estimated)}),
        el('td', {text: m.done ? 'done' : 'to do'})))));
    replace($('reshard'), bar, figures,
      reshard.last_error ? el('p', {class: 'error', text: `last error: ${reshard.last_error}`}) : null,
      reshard.waiting_for ? el('p', {class: 'error', id: 'reshard-waiting', text: `the switch waits for ${reshard.waiting_for}`}) : null,
      reshard.conflicts > 0 ? el('p', {class: 'error', text: 'keys found on two shards with different values are kept apart as santral:conflict:<key> (SCAN MATCH santral:conflict:*); compare and keep the right one'}) : null,
      moves);
  }

  function drawFleet(fleet, ourVersion) {
    const panel = $('fleet-panel');
    if (!fleet || !Array.isArray(fleet.routers)) {
      panel.hidden = true;
      return;
    }
    panel.hidden = false;
    replace($('routers').tBodies[0], ...fleet.routers.map((r) => el('tr', {class: r.map_version === ourVersion ? '' : 'behind'},
      el('td', {text: r.name}), el('td', {text: r.address}),
      el('td', {text: `${r.map_version}${r.map_version === ourVersion ? '' : ` (this router: ${ourVersion})`}`}),
      el('td', {text: r.lease_ttl_s === undefined ? '–' : `${number(r.lease_ttl_s)} s`}))));
  }

  // ---- analyzing a shard key (SANTRAL ANALYZE) --------------------------------------------

  let analyzing = false;

  // A query value as this router reads it: its parser takes only RFC 3986's query characters
  // and does not decode percent escapes, so whatever is legal in a query goes as it is (a
  // glob's * and :, a regex's ( ) + $) and only the rest is escaped.
  const queryValue = (text) => text.replace(/[^A-Za-z0-9\-._~!$'()*+,;=:@\/?]/gu, (c) => encodeURIComponent(c));

  const percent = (part, whole) => (whole > 0 ? `${(100 * part / whole).toFixed(1)}%` : '–');

  // The form's fields stay as they were while an analysis runs, and the button says why it waits.
  function analyzeRunning(running) {
    analyzing = running;
    $('analyze-panel').dataset.state = running ? 'running' : $('analyze-panel').dataset.state;
    for (const field of $('analyze-form').elements) field.disabled = running;
    $('analyze-submit').textContent = running ? 'Running…' : 'Analyze';
  }

  // Asks /analyze, which answers once its window is over; counts the window down meanwhile.
  async function analyze(event) {
    event.preventDefault();
    if (analyzing) return;
    const target = $('analyze-target').value.trim();
    const seconds = Number($('analyze-seconds').value);
    const sample = Number($('analyze-sample').value);
    const key = $('analyze-key').value.trim();
    let query = `target=${queryValue(target)}&seconds=${seconds}&sample=${sample}`;
    if (key) query += `&key=${queryValue(key)}`;
    const status = $('analyze-status');
    const ends = performance.now() + seconds * 1000;
    const tick = () => {
      const left = (ends - performance.now()) / 1000;
      status.textContent = left > 0
        ? `running… sampling ${(sample * 100).toLocaleString('en-US')}% of the requests to ${target}: ${Math.ceil(left)} s left of ${number(seconds)} s`
        : 'running… the window is over; drawing keys from the shards and comparing placements';
    };
    analyzeRunning(true);
    status.hidden = false;
    status.className = 'muted running';
    tick();
    const timer = setInterval(tick, 250);
    try {
      const report = await api(`/analyze?${query}`, false);
      drawAnalysis(report);
      $('analyze-panel').dataset.state = 'done';
      status.className = 'muted';
      status.textContent = `analysis of ${report.target} finished at ${new Date().toLocaleTimeString()}`;
    } catch (e) {
      // The report of an earlier analysis, if any, stays below: it says what it was of.
      $('analyze-panel').dataset.state = 'error';
      status.className = 'error analyze-error';
      status.textContent = e instanceof Refused ? e.reason
        : e instanceof NotServed ? 'this router does not serve /analyze (a Santral older than SANTRAL ANALYZE)'
          : `cannot reach the admin API: ${e.message}`;
    } finally {
      clearInterval(timer);
      analyzeRunning(false);
    }
  }

  function drawAnalysis(r) {
    const what = r.namespace ? `namespace ${r.namespace}` : `keys matching ${r.target}`;
    const summary = el('p', {class: 'analysis-summary', text: `${what} · ${number(r.seconds)} s, ` +
      `sampling ${(r.rate * 100).toLocaleString('en-US')}% of requests · ${number(r.sampled)} requests of the ` +
      `target sampled (of ${number(r.sampled_all)}) · ${number(r.stored)} keys drawn from ${r.shards} shards · ` +
      `routers: ${r.routers.join(', ')}`});
    const parts = [summary,
      el('h3', {text: 'Key characteristics'}), keysTable(r.keys),
      el('h3', {text: 'Read/write distribution'}, el('span', {class: 'muted', text: 'the shards a sampled request reached'})),
      distributionTable(r.distribution),
      r.scatter.length ? el('ul', {class: 'scatter'}, ...r.scatter.map((c) =>
        el('li', {}, 'scatter-gather: ', el('code', {text: c.what}), ` (${number(c.requests)} requests)`))) : null,
      el('h3', {text: 'What-if per strategy'}, el('span', {class: 'muted',
        text: `${r.shards} shards · SCAN MATCH ${r.scan_pattern || '–'}`})),
      whatIfTable(r.whatif)];
    if (r.warnings.length) parts.push(el('h3', {text: 'Warnings'}),
      el('ul', {class: 'warnings'}, ...r.warnings.map((w) => el('li', {text: w}))));
    parts.push(el('h3', {text: 'Recommendation'}), el('p', {class: 'recommendation', text: r.recommendation}));
    if (r.config_lines) parts.push(el('h4', {text: 'config lines that apply it'}),
      el('pre', {class: 'config-lines', text: r.config_lines}));
    if (r.config_text) parts.push(el('details', {class: 'config-text'},
      el('summary', {text: "this router's whole config with them"}), el('pre', {text: r.config_text})));
    replace($('analyze-report'), ...parts);
  }

  function keysTable(keys) {
    return el('table', {class: 'analysis-keys'},
      el('thead', {}, el('tr', {}, ...['shard key', 'accesses', 'distinct (est.)', 'most frequent', 'monotonicity']
        .map((h) => el('th', {text: h})))),
      el('tbody', {}, ...keys.map((k) => el('tr', {'data-key': k.name},
        el('td', {}, el('span', {class: 'key-name', text: k.name}),
          k.monotonic ? el('span', {class: 'badge monotonic', text: 'MONOTONIC'}) : null,
          k.low_cardinality ? el('span', {class: 'badge low-cardinality', text: 'LOW CARDINALITY'}) : null,
          k.numeric ? el('span', {class: 'muted', text: ' numeric'}) : null),
        el('td', {text: number(k.accesses)}),
        el('td', {text: `~${number(k.distinct)}`}),
        el('td', {class: 'top'}, ...(k.top.length ? k.top.map((t) =>
          el('span', {class: 'top-value'}, el('code', {text: t.value}), ` ${(t.share * 100).toFixed(1)}%`))
          : [el('span', {class: 'muted', text: 'none sampled'})])),
        el('td', {text: k.monotonicity === null ? `unknown (${number(k.new_keys)} new keys)`
          : `r = ${k.monotonicity.toFixed(2)} over ${number(k.new_keys)} new keys`})))));
  }

  // Per command kind: how many sampled requests reached one shard, several, all, or none.
  function distributionTable(rows) {
    if (rows.length === 0) return el('p', {class: 'muted', text: 'No request of the target was sampled.'});
    const kinds = ['one', 'several', 'all', 'none'];
    return el('table', {class: 'analysis-distribution'},
      el('thead', {}, el('tr', {}, ...['kind', 'requests', 'one shard', 'several', 'all', 'none (Santral answered)', '']
        .map((h) => el('th', {text: h})))),
      el('tbody', {}, ...rows.map((d) => {
        const total = kinds.reduce((a, k) => a + d[k], 0);
        const split = el('div', {class: 'split'});
        for (const k of kinds) {
          if (d[k] === 0) continue;
          const part = el('span', {class: `split-${k}`, title: `${k}: ${percent(d[k], total)}`});
          part.style.width = percent(d[k], total);
          split.append(part);
        }
        return el('tr', {'data-kind': d.kind}, el('td', {text: d.kind}), el('td', {text: number(total)}),
          ...kinds.map((k) => el('td', {text: percent(d[k], total)})), el('td', {}, split));
      })));
  }

  // One row per strategy and shard key: the recommended one stands out, excluded ones are
  // greyed with why.
  function whatIfTable(rows) {
    if (rows.length === 0) return el('p', {class: 'muted', text: 'Nothing to compare: no request or key of the target was sampled.'});
    const headings = [['strategy'], ['shard key'], ['hot-spot', "the busiest shard's accesses over the mean"],
      ['SCAN shards', 'shards a SCAN MATCH of the pattern visits'], ['store touches', 'stores read per access'],
      ['moved +1', 'share of keys that move when a shard is added'], ['hot-spot +1', 'hot-spot once a shard is added'],
      ['floor', 'the least hot-spot the largest unsplittable group allows'], ['']];
    const fixed = (n, digits = 2) => (typeof n === 'number' ? n.toFixed(digits) : '–');
    return el('table', {class: 'whatif'},
      el('thead', {}, el('tr', {}, ...headings.map(([h, title]) => el('th', title ? {text: h, title} : {text: h})))),
      el('tbody', {}, ...rows.map((w) => {
        const blank = w.excluded && w.hot_spot === 0;
        const figures = blank ? Array(6).fill('–') : [fixed(w.hot_spot), String(w.scan_shards), String(w.store_touches),
          `${fixed(w.moved * 100, 1)}%`, fixed(w.hot_spot_grown), fixed(w.floor)];
        const note = el('td', {class: 'note'},
          w.recommended ? el('span', {class: 'badge recommended', text: 'recommended'}) : null,
          w.excluded ? el('span', {class: 'excluded-reason', text: `excluded: ${w.excluded}`}) : null);
        const cls = [w.recommended ? 'recommended' : '', w.excluded ? 'excluded' : '', w.current ? 'current' : '']
          .filter((c) => c).join(' ');
        return el('tr', {class: cls, 'data-strategy': w.strategy, 'data-key': w.key},
          el('td', {text: w.strategy}), el('td', {text: w.key}), ...figures.map((f) => el('td', {text: f})), note);
      })));
  }

  $('analyze-form').addEventListener('submit', analyze);
  refresh();
})();
