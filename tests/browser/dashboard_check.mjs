// Opens Santral's dashboard in headless Chromium and checks what an operator would look for.
// Run by dashboard_test.py, which starts the cluster and the load; settings come from the
// environment:
//   DASHBOARD_URL  http://127.0.0.1:<admin port>/
//   ADMIN_TOKEN    the admin.token Santral was started with
//   SHARDS         the shards' names, comma separated
//   SALTED_KEY     a key that was salted with SANTRAL SALT and is being incremented
//   IDLE_SALTED_KEY a key salted with SANTRAL SALT (3 sub-keys) that no request touches
//   CACHED_KEY     a key read hot enough for the near cache
//   RISING_NAMESPACE a range namespace (numeric order) whose new keys' shard key rises with time
//   CHROMIUM       the browser binary
//   OUT_DIR        where the screenshots go
// Prints one line per check; exits 1 if any failed.
import { chromium } from 'playwright-core';

const env = (name) => {
  if (!process.env[name]) throw new Error(`${name} is not set`);
  return process.env[name];
};
const url = env('DASHBOARD_URL');
const token = env('ADMIN_TOKEN');
const shards = env('SHARDS').split(',');
const salted = env('SALTED_KEY');
const idleSalted = env('IDLE_SALTED_KEY');
const cached = env('CACHED_KEY');
const rising = env('RISING_NAMESPACE');
const outDir = env('OUT_DIR');

const failures = [];
function check(ok, what) {
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}`);
  if (!ok) failures.push(what);
}

const refreshes = (page) => page.evaluate(() => Number(document.body.dataset.refreshes || 0));
const waitRefreshes = (page, n, timeout = 15000) =>
  page.waitForFunction((n) => Number(document.body.dataset.refreshes || 0) >= n, n, {timeout});

// Opens the page and goes through the token prompt: a wrong token first, then the right one.
async function openWithToken(context, { tryWrongToken }) {
  const page = await context.newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('console', (m) => {
    // The 401s and 404s the page expects are logged by Chromium as failed loads; not errors.
    // Nor is the 409 of the analysis started while another runs, which the check provokes.
    if (m.type() === 'error' && !/status of (401|404|409)/.test(m.text())) problems.push(`console: ${m.text()}`);
  });
  const apiRequests = [];
  page.on('request', (r) => {
    if (!r.url().startsWith(url) || r.url() === url || /\.(js|css)$/.test(r.url())) return;
    apiRequests.push({url: r.url(), authorization: r.headers()['authorization'] || ''});
  });
  await page.goto(url);
  await page.waitForSelector('#token-dialog[open]', {timeout: 10000});
  if (tryWrongToken) {
    check(true, 'the page asks for the admin token when the API answers 401');
    await page.fill('#token-input', 'not-the-token');
    await page.click('#token-submit');
    await page.waitForSelector('#token-dialog[open] #token-error:not([hidden])', {timeout: 10000});
    check(true, 'a refused token is asked for again, saying it was refused');
  }
  await page.fill('#token-input', token);
  await page.click('#token-submit');
  await waitRefreshes(page, 1);
  return {page, problems, apiRequests};
}

const browser = await chromium.launch({
  executablePath: env('CHROMIUM'),
  args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
});
try {
  const context = await browser.newContext({viewport: {width: 1440, height: 1000}});
  const {page, problems, apiRequests} = await openWithToken(context, {tryWrongToken: true});

  // The sparklines before there is data: a rate needs two refreshes, so through the second
  // refresh every card says what the line will show instead of drawing one; from the third on
  // it draws, saying how much of the minute it covers. Read with the refresh count at once.
  const sparks = () => page.evaluate(() => ({
    refreshes: Number(document.body.dataset.refreshes || 0),
    states: [...document.querySelectorAll('#shards .spark-box')].map((b) => b.dataset.state),
    captions: [...document.querySelectorAll('#shards .spark-caption')].map((c) => c.textContent),
    lines: document.querySelectorAll('#shards .spark polyline').length,
  }));
  const early = await sparks();
  const drawing = early.refreshes >= 3;
  check(early.states.length === shards.length &&
        early.states.every((s) => s === (drawing ? 'filling' : 'waiting')) &&
        early.captions.every((c) => (drawing ? /^req\/s, last \d+ s$/ : /no data yet/).test(c)) &&
        early.lines === (drawing ? shards.length : 0),
    `after refresh ${early.refreshes} the sparklines say what they will show (${early.captions[0]}), no line drawn yet`);

  // The token: asked for once, sent as a bearer header, kept nowhere but in the page's memory.
  await waitRefreshes(page, 2);
  const prompts = await page.evaluate(() => document.getElementById('token-dialog').open);
  check(!prompts, 'once the token is given, the page stops asking');
  const first = apiRequests.findIndex((r) => r.authorization === `Bearer ${token}`);
  const afterToken = first < 0 ? [] : apiRequests.slice(first);
  check(afterToken.length >= 5 && afterToken.every((r) => r.authorization === `Bearer ${token}`),
    `every API request once the token is given carries Authorization: Bearer <token> (${afterToken.length} seen)`);
  check(apiRequests.every((r) => !r.url.includes(token)), 'the token is in no request URL');
  const stored = await page.evaluate(() => JSON.stringify({...localStorage}) +
    JSON.stringify({...sessionStorage}) + document.cookie + location.href);
  check(!stored.includes(token), 'the token is not in localStorage, sessionStorage, a cookie or the URL');

  // Every shard, with its state, rates, keys and memory.
  for (const name of shards) {
    const card = page.locator(`#shards [data-shard="${name}"]`);
    check(await card.count() === 1, `shard ${name} has its card`);
    check((await card.locator('.badge').first().textContent()) === 'up', `shard ${name} is up`);
  }
  await waitRefreshes(page, (await refreshes(page)) + 1);
  const keys = await page.$$eval('#shards .keys dd', (els) => els.map((e) => e.textContent));
  check(keys.length === shards.length && keys.every((k) => /^[0-9,]+$/.test(k)),
    `every shard shows its keys from INFO (${keys.join(', ')})`);
  const memory = await page.$$eval('#shards .memory dd', (els) => els.map((e) => e.textContent));
  check(memory.every((m) => /B$/.test(m)), `every shard shows its memory (${memory.join(', ')})`);
  const rates = await page.$$eval('#shards .rate dd', (els) => els.map((e) => e.textContent));
  check(rates.every((r) => r !== '–'), `every shard shows requests/s (${rates.join(', ')})`);
  const text = await page.textContent('body');
  for (const name of shards) check(text.includes(name), `"${name}" is on the page`);

  // A number changes between two refreshes: the shards' request counters, under load.
  const counters = () => page.$$eval('#shards .requests-total dd', (els) => els.map((e) => e.textContent).join(' '));
  const before = await counters();
  await waitRefreshes(page, (await refreshes(page)) + 2);
  const after = await counters();
  check(before !== after, `request counters change between refreshes (${before} -> ${after})`);

  await waitRefreshes(page, 4);
  const later = await sparks();
  check(later.states.every((s) => s === 'filling') && later.lines === shards.length &&
        later.captions.every((c) => /^req\/s, last \d+ s$/.test(c)),
    `once there are rates, each sparkline is drawn and says what it covers (${later.captions[0]})`);

  // The salted hot key, with each sub-key and its shard.
  const row = `#hotkeys tr[data-key="${salted}"]`;
  await page.waitForSelector(`${row} .sub-key`, {timeout: 20000}).catch(() => {});
  const subKeys = await page.$$eval(`${row} .sub-key`,
    (els) => els.map((e) => ({key: e.dataset.subKey, shard: e.dataset.shard})));
  check(subKeys.length === 4, `the salted hot key ${salted} is listed with 4 sub-keys (${JSON.stringify(subKeys)})`);
  check(subKeys.length > 0 && subKeys[0].key === salted, 'its sub-key 0 is the key itself');
  check(new Set(subKeys.map((s) => s.shard)).size === 4, 'its sub-keys are on 4 distinct shards');
  const badge = await page.locator(`${row} .badge.salted`).textContent().catch(() => '');
  check(/salted ×4 \(command\)/.test(badge), `it says who salted it (${badge})`);

  // A salted counter nobody touches is listed too, after the 15 hottest keys.
  const idleRow = `#hotkeys tr[data-key="${idleSalted}"]`;
  const idleSubKeys = await page.$$eval(`${idleRow} .sub-key`, (els) => els.length);
  const rows = await page.$$eval('#hotkeys tbody tr', (els) => els.length);
  const idleOps = await page.locator(`${idleRow} td`).nth(1).textContent().catch(() => '');
  check(idleSubKeys === 3 && idleOps === '0',
    `the salted counter ${idleSalted}, without traffic, is listed with its 3 sub-keys at 0 ops/s (${idleSubKeys} sub-keys, ${idleOps} ops/s)`);
  check(rows > 15, `the list holds the 15 hottest keys and the salted counters besides (${rows} rows)`);

  // The key everyone reads, answered by the near cache.
  const cachedBadge = `#hotkeys tr[data-key="${cached}"] .badge.cached`;
  await page.waitForSelector(cachedBadge, {timeout: 15000}).catch(() => {});
  check(await page.locator(cachedBadge).count() === 1, `the read-hot key ${cached} is shown as near-cached`);

  // The placement drawn: a ring, slot ranges, key ranges, a directory and zones.
  const drawings = await page.$$eval('#placement svg.placement', (els) => els.map((e) => e.getAttribute('class')));
  check(drawings.length >= 6, `placement drawings are on the page (${drawings.join(', ')})`);
  check(drawings.some((c) => c.includes('ring')) && drawings.some((c) => c.includes('slots')) &&
        drawings.some((c) => c.includes('ranges')), 'a ring, slot ranges and key ranges are drawn');
  const arcs = await page.$$eval('#placement svg.ring path', (els) => els.length);
  check(arcs > 100, `the rings are drawn arc by arc (${arcs} arcs)`);
  const cards = await page.$$eval('#placement .placement-card h3', (els) => els.map((e) => e.textContent));
  for (const strategy of ['hashed', 'slots', 'range', 'directory', 'zone', 'ketama'])
    check(cards.some((c) => c.includes(strategy)), `the ${strategy} placement has its card`);

  // The header: map version and the last reload.
  check((await page.textContent('#map-version')) === '1', 'the map version is shown');
  // Resharding and the fleet: hidden while the router does not serve them (404).
  check(await page.locator('#reshard-panel').isHidden(), 'the resharding panel is hidden while /reshard is not served');
  check(await page.locator('#fleet-panel').isHidden(), 'the fleet panel is hidden while /routers is not served');

  // Analyzing a shard key: the form, a refusal shown in the panel, then a real analysis of the
  // range namespace whose numeric key rises, over 2 s of the load.
  const targets = await page.$$eval('#analyze-targets option', (els) => els.map((e) => e.value));
  check(targets.includes(rising) && targets.includes('users'),
    `the analysis form offers the namespaces as targets (${targets.join(', ')})`);
  const defaults = [await page.inputValue('#analyze-seconds'), await page.inputValue('#analyze-sample')];
  check(defaults[0] === '5' && defaults[1] === '0.05', `the form defaults to 5 seconds, sampling 0.05 (${defaults.join(', ')})`);
  const panelState = () => page.getAttribute('#analyze-panel', 'data-state');

  // An analysis already runs (started here, outside the page): the page's is refused with 409,
  // and the panel says why.
  const other = fetch(`${url}analyze?target=users&seconds=3`, {headers: {Authorization: `Bearer ${token}`}});
  await new Promise((resolve) => setTimeout(resolve, 500));
  await page.fill('#analyze-target', rising);
  await page.fill('#analyze-seconds', '2');
  await page.click('#analyze-submit');
  await page.waitForSelector('#analyze-panel[data-state="error"]', {timeout: 10000}).catch(() => {});
  const refusal = await page.textContent('#analyze-status');
  check(await panelState() === 'error' && /already running/.test(refusal) &&
        await page.locator('#analyze-status.error').isVisible(),
    `an analysis refused (409, one already runs) says so in the panel (${refusal})`);
  check(!await page.locator('#analyze-submit').isDisabled(), 'after a refusal the form can be submitted again');
  check((await other).status === 200, 'the analysis that was running meanwhile finished');

  const analysisStarted = Date.now();
  await page.click('#analyze-submit');
  const running = {state: await panelState(), status: await page.textContent('#analyze-status'),
    disabled: await page.locator('#analyze-submit').isDisabled()};
  check(running.state === 'running' && /^running…/.test(running.status) && running.disabled,
    `while the window runs the panel says so and the button waits (${running.status})`);
  await page.waitForSelector('#analyze-panel[data-state="done"], #analyze-panel[data-state="error"]', {timeout: 30000}).catch(() => {});
  const took = (Date.now() - analysisStarted) / 1000;
  const state = await panelState();
  check(state === 'done', `the analysis of ${rising} finished with a report (${state}: ${await page.textContent('#analyze-status')})`);
  check(took >= 1.9, `the report came after the 2 s window (${took.toFixed(1)} s)`);
  const analyzeRequest = apiRequests.filter((r) => r.url.includes('/analyze?')).pop();
  check(analyzeRequest !== undefined && analyzeRequest.url.endsWith(`/analyze?target=${rising}&seconds=2&sample=0.05`) &&
        analyzeRequest.authorization === `Bearer ${token}`,
    `the page asked /analyze with the form's values and the token (${analyzeRequest && analyzeRequest.url})`);

  const whatIf = await page.$$eval('#analyze-report table.whatif tbody tr', (rows) => rows.map((r) => ({
    strategy: r.dataset.strategy, cls: r.className, note: r.querySelector('.note').textContent,
    background: getComputedStyle(r.cells[0]).backgroundColor, colour: getComputedStyle(r.cells[0]).color})));
  console.log(`     what-if: ${whatIf.map((w) => `${w.strategy} [${w.cls}]`).join('; ')}`);
  check(whatIf.length >= 4, `the what-if table has a row per strategy (${whatIf.length} rows)`);
  const recommended = whatIf.filter((w) => w.cls.split(' ').includes('recommended'));
  check(recommended.length === 1, `exactly one row is marked recommended (${recommended.length})`);
  const best = recommended[0] || {};
  check(/recommended/.test(best.note || '') && best.background === 'rgb(232, 245, 233)',
    `the recommended row (${best.strategy}) says so and is highlighted (${best.background})`);
  check(best.strategy !== undefined && !/range/.test(best.strategy) && !best.cls.includes('excluded'),
    `for a rising key the recommendation is not range placement (${best.strategy})`);
  const current = whatIf.find((w) => w.cls.split(' ').includes('current')) || {};
  check(/^current \(range\)/.test(current.strategy || '') && current.cls.includes('excluded') &&
        /excluded: .*rises with time/.test(current.note) && current.colour === 'rgb(154, 164, 175)',
    `the current range placement is greyed out with why (${current.note})`);
  const recommendation = (await page.textContent('#analyze-report .recommendation').catch(() => '')).trim();
  check(recommendation.length > 0 && !/^Nothing to recommend/.test(recommendation),
    `the recommendation is given (${recommendation})`);
  const configLines = await page.textContent('#analyze-report pre.config-lines').catch(() => '');
  check(configLines.includes(rising) && configLines.includes('strategy'),
    `the config lines that apply it are shown (${configLines.split('\n').slice(0, 3).join(' | ')})`);
  const badges = await page.$$eval('#analyze-report .analysis-keys tbody tr', (rows) => rows.map((r) => ({
    key: r.dataset.key, badges: [...r.querySelectorAll('.badge')].map((b) => b.textContent)})));
  const seq = badges[0] || {key: '', badges: []};
  check(seq.badges.includes('MONOTONIC') && !seq.badges.includes('LOW CARDINALITY'),
    `the rising numeric key ${seq.key} carries the MONOTONIC badge (${JSON.stringify(badges)})`);
  const warnings = await page.$$eval('#analyze-report .warnings li', (els) => els.map((e) => e.textContent));
  check(warnings.some((w) => /monotonic/.test(w)), `the warnings say the key is monotonic (${warnings.length} warnings)`);
  const kinds = await page.$$eval('#analyze-report .analysis-distribution tbody tr', (els) => els.map((e) => e.dataset.kind));
  check(kinds.length > 0, `the read/write distribution has a row per command kind (${kinds.join(', ')})`);
  await page.locator('#analyze-panel').screenshot({path: `${outDir}/dashboard-analyze.png`});

  await page.screenshot({path: `${outDir}/dashboard.png`, fullPage: true});
  const cost = await page.textContent('#cost');
  console.log(`     ${cost}`);
  check(problems.length === 0, `no script errors${problems.length ? `: ${problems.join('; ')}` : ''}`);

  // The same page where the router serves /reshard and /routers (answered here by the test,
  // in the shapes of issue 16, until Santral serves them): both panels appear and are drawn.
  const served = await browser.newContext({viewport: {width: 1440, height: 1000}});
  await served.route('**/reshard', (route) => route.fulfill({json: {
    state: 'moving', map_version: 2, units_total: 4, units_done: 1, keys_moved: 25000,
    bytes_moved: 3200000, keys_per_sec: 5000, eta_s: 15, errors: 0, last_error: '',
    moves: [{unit: 'slots 0-4095', from: shards[0], to: shards[3], keys_estimated: 25000, bytes_estimated: 3200000, done: true},
            {unit: 'slots 4096-8191', from: shards[1], to: shards[3], keys_estimated: 24000, bytes_estimated: 3100000, done: false}]}}));
  await served.route('**/routers', (route) => route.fulfill({json: {routers: [
    {name: 'router-a', address: '127.0.0.1:6380', map_version: 1, lease_ttl_s: 9.5},
    {name: 'router-b', address: '127.0.0.1:6381', map_version: 2, lease_ttl_s: 8.1}]}}));
  const second = await openWithToken(served, {tryWrongToken: false});
  await waitRefreshes(second.page, 2);
  check(await second.page.locator('#reshard-panel').isVisible(), 'the resharding panel shows a move in progress');
  const progress = await second.page.textContent('#reshard .progress-text');
  check(progress.includes('1 of 4 units'), `with its progress bar (${progress})`);
  const reshardText = await second.page.textContent('#reshard');
  check(reshardText.includes('slots 4096-8191') && reshardText.includes('15 s'), 'its moves and ETA');
  check(await second.page.locator('#fleet-panel').isVisible(), 'the fleet panel lists the routers');
  check((await second.page.$$('#routers tbody tr')).length === 2, 'one row per router');
  await second.page.screenshot({path: `${outDir}/dashboard-resharding.png`, fullPage: true});
  check(second.problems.length === 0, `no script errors with both panels${second.problems.length ? `: ${second.problems.join('; ')}` : ''}`);
} finally {
  await browser.close();
}
console.log(`${failures.length === 0 ? 'dashboard: all checks passed' : `dashboard: ${failures.length} failed`}`);
process.exit(failures.length === 0 ? 0 : 1);
