// pagelab's Node side of the local engine: a long-lived process that drives Lighthouse.
//
// Protocol (one JSON object per line):
//   stdout <- {"type": "ready", "lighthouse_version", "node_version", "user_agents",
//              "ad_entities", "ad_domains"}
//   stdin  -> {"id", "browser_url", "warm": true}  (after a restart of Chromium: connect)
//   stdin  -> {"id", "url", "browser_url", "config", "lhr_path", "html_path", "har_path",
//              "scrub_pattern": "" | RegExp source (engine/_scrub.py),
//              "network": null | {"origin_headers", "block", "allow", "adblock"},
//              "user_agent": null | string,
//              "frames_dir": null | path}
//   stdout <- {"type": "result", "id", "ok": true, "blocked": [{"url", "reason"}],
//              "frames": [{"file", "ms"}], "main_document_error": null | "net::ERR_...",
//              "timings": {"<part>_ms": ms}}
//          |  {"type": "result", "id", "ok": false, "error": {"code", "message", "lighthouse"}}
// Python owns Chromium (it starts, restarts and kills it); this process only connects to it.
// Each run gets a fresh browser context, so no cookie, cache or storage survives a run.

import {createInterface} from 'node:readline';
import {readFileSync, renameSync, writeFileSync} from 'node:fs';
import {readFile, writeFile} from 'node:fs/promises';
import path from 'node:path';
import {pathToFileURL} from 'node:url';

const engineDir = process.env.PAGELAB_ENGINE_DIR;
const fromEngine = (rel) => import(pathToFileURL(path.join(engineDir, 'node_modules', rel)).href);

const {default: lighthouse, startFlow} = await fromEngine('lighthouse/core/index.js');
const {ReportGenerator} = await fromEngine('lighthouse/report/generator/report-generator.js');
const constants = await fromEngine('lighthouse/core/config/constants.js');
const {default: puppeteer} = await fromEngine('puppeteer-core/lib/puppeteer/puppeteer-core.js');
const {ExecutionContext} = await fromEngine('lighthouse/core/gather/driver/execution-context.js');
const {pageFunctions} = await fromEngine('lighthouse/core/lib/page-functions.js');
const {initializeConfig} = await fromEngine('lighthouse/core/config/config.js');
const {default: defaultConfig} = await fromEngine('lighthouse/core/config/default-config.js');
// sitespeed.io's DevTools-log-to-HAR converter (the one browsertime uses).
const chromeHar = await fromEngine('chrome-har/index.js');
const lighthousePackage = JSON.parse(
  await readFile(path.join(engineDir, 'node_modules', 'lighthouse', 'package.json'), 'utf8'));
// The ad entities of third-party-web, the entity list Lighthouse itself classifies requests
// with: `*.example.com` covers example.com and its subdomains, a plain domain only itself.
const entities = JSON.parse(await readFile(
  path.join(engineDir, 'node_modules', 'third-party-web', 'dist', 'entities.json'), 'utf8'));
const adEntities = entities.filter((entity) => entity.category === 'ad');
const adPatterns = adEntities.flatMap((entity) => entity.domains).map((d) => d.toLowerCase());
const adHosts = new Set(adPatterns.filter((d) => !d.startsWith('*.')));
const adSuffixes = new Set(adPatterns.filter((d) => d.startsWith('*.')).map((d) => d.slice(2)));

const send = (message) => process.stdout.write(JSON.stringify(message) + '\n');

// Lighthouse measures the machine's CPU (its BenchmarkIndex, ~1 s of busy JavaScript on
// about:blank) before every run. The value is only reported (lhr.environment) and warned on,
// never used for a metric, and engines run on the same machine run after run: measure it
// when no reading is at hand, then again every BENCHMARK_EVERY_RUNS runs or
// BENCHMARK_MAX_AGE_MS.
// Lighthouse's ExecutionContext and pageFunctions are the very module instances Lighthouse
// uses (same files), so the wrapper sees its calls; any other evaluation passes through.
const BENCHMARK_EVERY_RUNS = 10;
const BENCHMARK_MAX_AGE_MS = 5 * 60 * 1000;
// The reading is the machine's, not this process's: it is kept in a file beside the engine
// lock (PAGELAB_BENCHMARK_FILE, set by the engine), read and written only while a run holds
// that lock, so a new engine (a `pagelab run`, a notebook kernel, a test session) reuses a
// reading another engine on the machine took, under the same rule, instead of paying ~1 s on
// its first run. A missing or unreadable file is a reading not taken yet.
const benchmarkFile = process.env.PAGELAB_BENCHMARK_FILE;
const benchmark = {value: null, measuredAt: 0, reused: 0};

function loadBenchmark() {
  if (!benchmarkFile) return;
  try {
    const {value, measuredAt, reused} = JSON.parse(readFileSync(benchmarkFile, 'utf8'));
    if (Number.isFinite(value) && value > 0 && Number.isFinite(measuredAt) &&
        measuredAt <= Date.now() && Number.isInteger(reused) && reused >= 0) {
      Object.assign(benchmark, {value, measuredAt, reused});
    }
  } catch {
    // Not taken yet, or not ours to read: this process's own reading stands.
  }
}

function saveBenchmark() {
  if (!benchmarkFile) return;
  const temporary = `${benchmarkFile}.${process.pid}`;
  try {
    writeFileSync(temporary, JSON.stringify(benchmark));
    renameSync(temporary, benchmarkFile); // atomic: a reader sees the old reading or the new
  } catch {
    // A courtesy to the next engine: this run's reading stands either way.
  }
}

const evaluate = ExecutionContext.prototype.evaluate;
ExecutionContext.prototype.evaluate = function (mainFn, options) {
  if (mainFn !== pageFunctions.computeBenchmarkIndex) return evaluate.call(this, mainFn, options);
  loadBenchmark();
  const fresh = benchmark.value !== null && benchmark.reused < BENCHMARK_EVERY_RUNS - 1 &&
    Date.now() - benchmark.measuredAt < BENCHMARK_MAX_AGE_MS;
  if (fresh) {
    benchmark.reused += 1;
    saveBenchmark();
    return Promise.resolve(benchmark.value);
  }
  return evaluate.call(this, mainFn, options).then((value) => {
    Object.assign(benchmark, {value, measuredAt: Date.now(), reused: 0});
    saveBenchmark();
    return value;
  });
};

// Lighthouse resolves its config on every run: it loads and checks all ~150 audits and ~40
// gatherers of the default config, then drops those outside `onlyCategories` (~0.35 s a run).
// The warm engine resolves each filter set once and hands Lighthouse only what survived (the
// same artifacts, audits, categories and groups), so every later run skips that work.
const FILTER_SETTINGS = ['onlyCategories', 'onlyAudits', 'skipAudits'];
const slimConfigs = new Map();

async function slimConfig(config, modes = ['navigation']) {
  if (config.extends !== 'lighthouse:default' || config.artifacts || config.audits) return config;
  const filters = Object.fromEntries(FILTER_SETTINGS.map((key) => [key, config.settings?.[key]]));
  const key = JSON.stringify([filters, modes]);
  let base = slimConfigs.get(key);
  if (base === undefined) {
    // A flow's one config serves each step's mode: the union of what each mode keeps, which
    // Lighthouse filters by the step's mode again (a timespan keeps its INP audit).
    const artifacts = new Map();
    const audits = new Map();
    const categories = {};
    const groups = {};
    for (const mode of modes) {
      const {resolvedConfig} = await initializeConfig(mode, {extends: config.extends,
        settings: filters});
      for (const a of resolvedConfig.artifacts) {
        if (!artifacts.has(a.id)) artifacts.set(a.id, {id: a.id, gatherer: a.gatherer.path});
      }
      for (const a of resolvedConfig.audits || []) {
        if (!audits.has(a.path)) audits.set(a.path, {path: a.path, options: a.options});
      }
      for (const [id, category] of Object.entries(resolvedConfig.categories || {})) {
        const known = categories[id] ??= {...category, auditRefs: []};
        for (const ref of category.auditRefs) {
          if (!known.auditRefs.some((k) => k.id === ref.id)) known.auditRefs.push(ref);
        }
      }
      Object.assign(groups, resolvedConfig.groups || {});
    }
    // Each mode keeps its audits in the default config's order: so does the union (the
    // report lists a category's audits in that order).
    for (const [id, category] of Object.entries(categories)) {
      const order = (defaultConfig.categories?.[id]?.auditRefs || []).map((ref) => ref.id);
      const rank = (ref) => (order.includes(ref.id) ? order.indexOf(ref.id) : order.length);
      category.auditRefs.sort((a, b) => rank(a) - rank(b));
    }
    const paths = [...[...artifacts.values()].map((a) => a.gatherer),
      ...[...audits.values()].map((a) => a.path)];
    // Not expressible by path: remembered as null, so Lighthouse alone resolves it from then on.
    base = paths.some((p) => typeof p !== 'string') ? null : {
      artifacts: [...artifacts.values()], audits: [...audits.values()], categories, groups,
    };
    slimConfigs.set(key, base);
  }
  return base ? {...structuredClone(base), settings: config.settings} : config;
}

/** @type {Map<string, import('puppeteer-core').Browser>} */
const browsers = new Map();

async function browserAt(browserUrl) {
  const known = browsers.get(browserUrl);
  if (known?.connected) return known;
  // Python restarts Chromium on another port when it must: forget stale connections.
  for (const [url, browser] of browsers) {
    browsers.delete(url);
    await browser.disconnect().catch(() => {});
  }
  const browser = await puppeteer.connect({browserURL: browserUrl, defaultViewport: null});
  browsers.set(browserUrl, browser);
  return browser;
}

// Secrets (passwords, cookie values) must not survive in the stored LHR or HTML report.
// They are replaced inside the string values (and keys) of the parsed LHR, and both files
// are generated from the scrubbed object: replacing text in the serialized output broke the
// JSON (a cookie value "1") and could remove an escaping backslash from the report's inline
// script (issue 22, finding 6). The request's `scrub_pattern`, built by engine/_scrub.py,
// matches every secret in every form a page writes it (URL-encoded, HTML references, JSON
// escapes: issue 34, point 2); Python scrubs its own messages with the same expression.
function secretsOf(request) {
  return request.scrub_pattern ? new RegExp(request.scrub_pattern, 'g') : null;
}

function scrubText(text, secrets) {
  return secrets ? text.replace(secrets, '***') : text;
}

function scrub(value, secrets) {
  if (typeof value === 'string') return scrubText(value, secrets);
  if (Array.isArray(value)) return value.map((item) => scrub(item, secrets));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(
      ([key, item]) => [scrubText(key, secrets), scrub(item, secrets)]));
  }
  return value;
}

function isAdHost(hostname) {
  let host = hostname.toLowerCase().replace(/\.$/, '');
  if (adHosts.has(host)) return true;
  // Walk up the labels: a.b.doubleclick.net, b.doubleclick.net, doubleclick.net, net.
  while (host) {
    if (adSuffixes.has(host)) return true;
    const dot = host.indexOf('.');
    if (dot < 0) return false;
    host = host.slice(dot + 1);
  }
  return false;
}

// The config's URL patterns: `*` matches any run of characters; a pattern without `*` matches
// any URL containing it (what Chromium's Network.setBlockedURLs did with plain strings).
// Python's pagelab.models.url_pattern_matches has the same rules and the same algorithm:
// a greedy two-pointer match that backtracks only to the last `*`, so a pattern such as
// `*a*a*a*a*b` costs O(pattern x URL) at worst instead of a regex's exponential time.
function wildcardMatches(pattern, text) {
  let p = 0;
  let t = 0;
  let star = -1;
  let resume = 0;
  while (t < text.length) {
    if (p < pattern.length && pattern[p] !== '*' && pattern[p] === text[t]) {
      p += 1;
      t += 1;
    } else if (p < pattern.length && pattern[p] === '*') {
      star = p;
      resume = t;
      p += 1;
    } else if (star >= 0) {
      p = star + 1;
      resume += 1;
      t = resume;
    } else {
      return false;
    }
  }
  while (p < pattern.length && pattern[p] === '*') p += 1;
  return p === pattern.length;
}

function patternMatcher(pattern) {
  if (!pattern.includes('*')) return (url) => url.includes(pattern);
  return (url) => wildcardMatches(pattern, url);
}

/**
 * Per-request control over the page's network, on a CDP session of our own: the Fetch domain
 * pauses every request so that (1) the whitelist, blacklist and ad list decide whether it may
 * leave the browser and (2) credentials and cookies are added only to requests for the tested
 * page's origin. Lighthouse's `extraHeaders` would send them to every origin the page contacts,
 * and its `blockedUrlPatterns` cannot express whitelist exceptions.
 */
async function controlNetwork(page, network) {
  const session = await page.createCDPSession();
  const allow = (network.allow || []).map(patternMatcher);
  const block = (network.block || []).map(patternMatcher);
  const originHeaders = Object.entries(network.origin_headers || {});
  const blocked = [];
  // Matching is bounded per URL (patterns bounded at creation, URLs by maxUrlLength) and
  // per run (budgetMs): past the budget every further request fails and so does the run,
  // a failure of the test's own config, charged (issue 22, finding 5).
  const maxUrlLength = network.max_url_length || Infinity;
  const budgetMs = network.pattern_budget_ms ?? Infinity;
  const control = {blocked, session, matchingMs: 0, exhausted: false};
  session.on('Fetch.requestPaused', async (event) => {
    const {requestId, request} = event;
    let url;
    try {
      url = new URL(request.url);
    } catch {
      url = null;
    }
    let reason = null;
    let allowed = false;
    if (control.exhausted) {
      reason = 'pattern-budget';
    } else if (request.url.length > maxUrlLength) {
      // Too long to judge within the bound: a blacklist cannot vouch for it.
      if (block.length) reason = 'url-too-long';
    } else if (allow.length || block.length) {
      const matchStarted = performance.now();
      allowed = allow.some((matches) => matches(request.url));
      if (!allowed && block.some((matches) => matches(request.url))) reason = 'blacklist';
      control.matchingMs += performance.now() - matchStarted;
      if (control.matchingMs > budgetMs) control.exhausted = true;
    }
    if (!reason && !allowed && network.adblock && url && isAdHost(url.hostname)) {
      reason = 'adblock';
    }
    if (reason) {
      blocked.push({url: request.url, reason});
      session.send('Fetch.failRequest', {requestId, errorReason: 'BlockedByClient'})
        .catch(() => {});
      return;
    }
    if (url && url.origin === network.origin && originHeaders.length) {
      withOriginHeaders(request).then(
        (headers) => session.send('Fetch.continueRequest', {requestId, headers}),
        () => session.send('Fetch.continueRequest', {requestId}),
      ).catch(() => {});
      return;
    }
    session.send('Fetch.continueRequest', {requestId}).catch(() => {});
  });

  // A Cookie header set here replaces the cookie jar's for this request, so the cookies the
  // page itself set (document.cookie, Set-Cookie) are merged in; theirs win on a name clash,
  // as the page's later value would in a browser.
  async function withOriginHeaders(request) {
    const own = new Map(originHeaders.map(([name, value]) => [name.toLowerCase(), [name, value]]));
    if (own.has('cookie')) {
      const {cookies} = await session.send('Network.getCookies', {urls: [request.url]});
      const jar = new Map(cookies.map((cookie) => [cookie.name, cookie.value]));
      const merged = own.get('cookie')[1].split('; ')
        .filter((pair) => !jar.has(pair.split('=')[0]));
      for (const [name, value] of jar) merged.push(`${name}=${value}`);
      own.set('cookie', ['Cookie', merged.join('; ')]);
    }
    const headers = Object.entries(request.headers)
      .filter(([name]) => !own.has(name.toLowerCase()))
      .map(([name, value]) => ({name, value}));
    for (const [name, value] of own.values()) headers.push({name, value});
    return headers;
  }
  await session.send('Fetch.enable', {patterns: [{urlPattern: '*', requestStage: 'Request'}]});
  return control;
}

// The trace's screenshots (Lighthouse records them anyway, for the filmstrip and Speed
// Index), so a video costs the run nothing: written as JPEG files for Python to encode.
async function writeFrames(artifacts, lhr, dir) {
  const events = artifacts?.Trace?.traceEvents || [];
  const origin = lhr.audits?.metrics?.details?.items?.[0]?.observedTimeOriginTs;
  const shots = events.filter((e) => e.name === 'Screenshot' && e.args?.snapshot)
    .sort((a, b) => a.ts - b.ts);
  if (!shots.length) return [];
  const start = typeof origin === 'number' ? origin : shots[0].ts;
  const frames = [];
  for (const [index, shot] of shots.entries()) {
    const file = path.join(dir, `frame-${String(index).padStart(5, '0')}.jpg`);
    await writeFile(file, Buffer.from(shot.args.snapshot, 'base64'));
    frames.push({file, ms: Math.max(0, (shot.ts - start) / 1000)});
  }
  return frames;
}

// Headers whose values are credentials: masked in the HAR whatever the test's secrets are.
const SECRET_HEADERS = new Set(['authorization', 'proxy-authorization', 'cookie', 'set-cookie',
  'x-api-key']);

function maskHeaders(headers) {
  for (const header of headers || []) {
    if (SECRET_HEADERS.has(String(header.name).toLowerCase())) header.value = '***';
  }
}

// The run as a HAR 1.2 document, from the DevTools log Lighthouse recorded (its network
// events), converted by chrome-har; credentials masked, every secret of the test scrubbed.
function harText(artifacts, lhr, secrets) {
  const log = artifacts?.DevtoolsLog;
  if (!Array.isArray(log) || !log.length) return null;
  const har = chromeHar.harFromMessages(log, {includeTextFromResponseBody: false});
  har.log.creator = {name: 'pagelab', version: lighthousePackage.version,
    comment: 'chrome-har from the DevTools log of Lighthouse ' + lighthousePackage.version};
  har.log.browser = {name: 'Chromium', version: String(lhr.environment?.hostUserAgent || '')
    .match(/Chrome\/([\d.]+)/)?.[1] || ''};
  for (const entry of har.log.entries) {
    maskHeaders(entry.request?.headers);
    maskHeaders(entry.response?.headers);
    for (const cookie of [...(entry.request?.cookies || []), ...(entry.response?.cookies || [])]) {
      cookie.value = '***';
    }
  }
  return JSON.stringify(scrub(har, secrets));
}

// The main document's network error (net::ERR_CONNECTION_REFUSED...), from the DevTools log
// Lighthouse keeps when the page failed to load: the LHR names only Lighthouse's own code
// (a refused connection is CHROME_INTERSTITIAL_ERROR), not what the network said.
function mainDocumentError(artifacts) {
  const log = artifacts?.DevtoolsLogError || artifacts?.DevtoolsLog || [];
  const documents = new Set();
  let mainFrame = null;
  for (const {method, params} of log) {
    if (method === 'Network.requestWillBeSent' && params?.type === 'Document') {
      mainFrame ??= params.frameId;
      if (params.frameId === mainFrame) documents.add(params.requestId);
    } else if (method === 'Network.loadingFailed' && documents.has(params?.requestId) &&
      params.errorText && !params.canceled) {
      return String(params.errorText);
    }
  }
  return null;
}

// What a page run and a flow run share: a fresh browser context in the warm browser (no
// cookie, cache or storage of another run), a page with the run's user agent, and the
// network control (block lists, adblock, headers for ``origin``); ``run(page, control)``
// does the rest, and the context is closed whatever happens.
async function inFreshPage(request, origin, run) {
  const browser = await browserAt(request.browser_url);
  const context = await browser.createBrowserContext();
  try {
    const page = await context.newPage();
    const settings = request.config.settings;
    if (settings.emulatedUserAgent === null) {
      settings.emulatedUserAgent = constants.userAgents[settings.formFactor];
    }
    if (request.user_agent) {
      // Verbatim: Lighthouse's own emulation would rewrite its Chrome version.
      const session = await page.createCDPSession();
      await session.send('Network.setUserAgentOverride', {userAgent: request.user_agent});
    }
    // The server's target policy is not here: Python's egress proxy enforces it on every
    // connection of the browser (pagelab/engine/_egress.py).
    const control = request.network
      ? await controlNetwork(page, {...request.network, origin})
      : null;
    return await run(page, control);
  } finally {
    await context.close().catch(() => {});
  }
}

async function runOne(request) {
  const started = performance.now();
  // Milliseconds of each part of the run here (Python adds its own: RunResult.phases).
  const timings = {};
  let mark = started;
  const lap = (name) => {
    const now = performance.now();
    timings[name] = now - mark;
    mark = now;
  };
  // The tested page's origin is the requested URL's (a redirect elsewhere gets nothing).
  return inFreshPage(request, new URL(request.url).origin, async (page, control) => {
    lap('context_ms');
    const config = await slimConfig(request.config);
    lap('config_ms');
    const result = await lighthouse(request.url, {logLevel: 'error'}, config, page);
    if (!result) throw new Error('Lighthouse returned no result');
    lap('lighthouse_ms');
    await control?.session.detach().catch(() => {});
    if (control?.exhausted) {
      const err = new Error('URL_PATTERNS_TOO_SLOW');
      err.code = 'URL_PATTERNS_TOO_SLOW';
      err.friendlyMessage = `matching the config's URL patterns took over ` +
        `${request.network.pattern_budget_ms} ms in this run; shorten the patterns with '*'`;
      throw err;
    }
    const lhr = result.lhr;
    if (lhr.configSettings?.extraHeaders) {
      lhr.configSettings.extraHeaders = Object.fromEntries(
        Object.keys(lhr.configSettings.extraHeaders).map((name) => [name, '***']));
    }
    const secrets = secretsOf(request);
    const scrubbed = scrub(lhr, secrets);
    await writeFile(request.lhr_path, ReportGenerator.generateReport(scrubbed, 'json'));
    await writeFile(request.html_path, ReportGenerator.generateReport(scrubbed, 'html'));
    lap('reports_ms');
    const frames = request.frames_dir ? await writeFrames(result.artifacts, lhr, request.frames_dir)
      : [];
    lap('frames_ms');
    const har = request.har_path ? harText(result.artifacts, lhr, secrets) : null;
    if (har) await writeFile(request.har_path, har);
    lap('har_ms');
    const networkError = lhr.runtimeError ? mainDocumentError(result.artifacts) : null;
    return {blocked: control ? control.blocked : [], frames, timings,
      main_document_error: networkError};
  });
}

// -- user flows ---------------------------------------------------------------------------
// A flow request carries {"flow": {"name", "steps": [...]}, "flow_path", "html_path",
// "steps_dir"} beside the run's usual fields (steps_dir gets step-N.html, N from 1). Steps run through Lighthouse's own user-flow API in one fresh
// context; a failing action stops the flow and the steps measured before it are kept.

async function runFlowAction(page, action) {
  switch (action.kind) {
    case 'click': return page.click(action.selector);
    case 'type': return page.type(action.selector, action.text);
    case 'press': return page.keyboard.press(action.key);
    case 'select': return page.select(action.selector, action.value);
    case 'scroll':
      if (typeof action.to === 'number') {
        return page.evaluate((y) => window.scrollBy(0, y), action.to);
      }
      return page.$eval(action.to, (element) => element.scrollIntoView());
    case 'wait_for':
      return page.waitForSelector(action.selector, {timeout: action.timeout_ms});
    case 'wait': return new Promise((resolve) => setTimeout(resolve, action.ms));
    default: throw new Error(`unknown action ${action.kind}`);
  }
}

// -- settling a timespan on the paint after its last interaction (issue 35, point 1) --------
// Chromium writes an interaction's INP trace events (Responsiveness.Renderer.UserInteraction,
// EventTiming) only when the frame that follows it has been presented. A step that ends as soon
// as its last action returns (a `wait_for` already true, a slow raster or a loaded machine)
// stopped the trace before that, and its INP went missing. So a timespan with an interacting
// action ends only once the page has reported an Event Timing entry of every interaction it
// counted (the same task as the trace events), or after SETTLE_BOUND_MS. Not just any entry
// when the interaction's last event (a click, a keyup) has slow handlers: a click's
// `pointerdown` can be presented on a frame of its own before the `click` whose handler is the
// slow part, and a step that ended there held only the pointerdown in its trace (its INP 28 ms
// for a 50 ms handler, seen on a loaded machine). So the page times each last event's
// handlers: one that ended 16 ms or more after its input is sure to have an entry of its own,
// which is waited for too. An interaction whose duration stays under 16 ms has no observable
// entry (the smallest `durationThreshold`): it waits out the bound. Timespans without such an
// action are run exactly as before.
const INTERACTING_ACTIONS = new Set(['click', 'type', 'press']);
const SETTLE_BOUND_MS = 3000;

// In the page (and every document a navigation in the timespan opens): counts interactions
// from here on, records the ids of those with a reported Event Timing entry, and the inputs
// (their `timeStamp`) of last events whose handlers ended 16 ms or more after them and whose
// own entry is still awaited. A later timespan on the same document starts afresh.
function watchInteractions() {
  const fresh = () => ({since: performance.interactionCount ?? 0, reported: new Set(),
    entries: [], awaited: [], timing: 0});
  const known = window.__pagelabInteractions;
  if (known) {
    Object.assign(known, fresh());
    return;
  }
  const watch = fresh();
  Object.defineProperty(window, '__pagelabInteractions', {value: watch});
  // The last event of a pointer interaction (pointerdown, pointerup, click) and of a key
  // press (keydown, keyup). An entry's startTime is its event's timeStamp.
  const lastEvents = ['click', 'keyup'];
  const sameInput = (entry, start) => lastEvents.includes(entry.name)
    && Math.abs(entry.startTime - start) <= 1;
  const record = (list) => {
    for (const entry of list.getEntries()) {
      if (!entry.interactionId) continue;
      watch.reported.add(entry.interactionId);
      watch.awaited = watch.awaited.filter((start) => !sameInput(entry, start));
      watch.entries.push(entry);
    }
  };
  for (const type of lastEvents) {
    window.addEventListener(type, (event) => {
      // A click the keyboard made (detail 0) belongs to its key press, which ends in a keyup.
      if (!event.isTrusted || (type === 'click' && event.detail === 0)) return;
      const start = event.timeStamp;
      watch.timing += 1;
      // A task queued here runs once every handler of this event has run.
      setTimeout(() => {
        watch.timing -= 1;
        if (performance.now() - start >= 16
            && !watch.entries.some((entry) => sameInput(entry, start))) {
          watch.awaited.push(start);
        }
      }, 0);
    }, {capture: true});
  }
  new PerformanceObserver(record).observe({type: 'event', durationThreshold: 16});
  new PerformanceObserver(record).observe({type: 'first-input'});
}

// In the page: resolves once every interaction counted since watchInteractions has an entry
// reported and no slow last event's own entry is awaited, or after boundMs; says how many
// were counted and reported.
function interactionsReported(boundMs) {
  const watch = window.__pagelabInteractions;
  if (!watch) return Promise.resolve({counted: 0, reported: 0});
  const status = () => ({counted: (performance.interactionCount ?? 0) - watch.since,
    reported: watch.reported.size});
  return new Promise((resolve) => {
    const deadline = performance.now() + boundMs;
    const check = () => {
      const now = status();
      const settled = now.reported >= now.counted && !watch.awaited.length && !watch.timing;
      if (settled || performance.now() >= deadline) resolve(now);
      else setTimeout(check, 10);
    };
    check();
  });
}

// In the page: the slowest interaction since watchInteractions (the one INP reports: the
// largest duration), as {event, selector, node_label}: the type of its event whose handlers
// ran longest and that event's target (else the first target any of its events had),
// named by Lighthouse's own getNodeDetails, as its reports name nodes. Lighthouse 13's LHR
// has neither (its inp-breakdown-insight names the node of the interaction's first event,
// a pointerdown, whose trace event has no node: docs/decisions.md). Null without an entry.
function slowestInteraction(getNodeDetails) {
  const watch = window.__pagelabInteractions;
  if (!watch || !watch.entries.length) return null;
  const groups = new Map();
  for (const entry of watch.entries) {
    if (!groups.has(entry.interactionId)) groups.set(entry.interactionId, []);
    groups.get(entry.interactionId).push(entry);
  }
  let slowest = null;
  for (const group of groups.values()) {
    const duration = Math.max(...group.map((entry) => entry.duration));
    if (slowest === null || duration > slowest.duration) slowest = {duration, group};
  }
  const processing = (entry) => entry.processingEnd - entry.processingStart;
  const busiest = slowest.group.reduce((a, b) => (processing(b) > processing(a) ? b : a));
  const target = busiest.target ?? slowest.group.find((entry) => entry.target)?.target;
  const node = target ? getNodeDetails(target) : null;
  return {event: busiest.name, selector: node?.selector ?? null,
    node_label: node?.nodeLabel ?? null};
}

async function slowestInteractionOf(page) {
  // Bounded, as settleTimespan: a page that is navigating away may never answer.
  let timer;
  const bound = new Promise((resolve) => {
    timer = setTimeout(() => resolve(null), SETTLE_BOUND_MS);
  });
  const expression = `(${slowestInteraction})(${pageFunctions.getNodeDetails})`;
  const found = await Promise.race([page.evaluate(expression).catch(() => null), bound]);
  clearTimeout(timer);
  return found;
}

async function watchTimespanInteractions(page) {
  const {identifier} = await page.evaluateOnNewDocument(watchInteractions);
  await page.evaluate(watchInteractions).catch(() => {});
  return identifier;
}

async function settleTimespan(page, identifier) {
  await page.removeScriptToEvaluateOnNewDocument(identifier).catch(() => {});
  // Bounded here too: an evaluation in a page that is navigating away may never answer.
  let timer;
  const bound = new Promise((resolve) => {
    timer = setTimeout(resolve, SETTLE_BOUND_MS + 1000);
  });
  await Promise.race([page.evaluate(interactionsReported, SETTLE_BOUND_MS).catch(() => {}),
    bound]);
  clearTimeout(timer);
}

function describeAction(action) {
  const target = action.selector ?? action.key ?? action.to ?? action.ms;
  return target === undefined ? action.kind : `${action.kind} ${JSON.stringify(target)}`;
}

async function runFlow(request) {
  // Headers and cookies go to the first navigation's origin.
  const firstUrl = request.flow.steps.find((step) => step.kind === 'navigate').url;
  return inFreshPage(request, new URL(firstUrl).origin, async (page, control) => {
    // Each step resolves the config again (navigation, timespan and snapshot alike): the
    // slim one saves that work on every step, as for a page run; Lighthouse still filters
    // it by each step's mode.
    const config = await slimConfig(request.config, ['navigation', 'timespan', 'snapshot']);
    const flow = await startFlow(page, {name: request.flow.name, config,
      flags: {logLevel: 'error'}});
    let failure = null;
    let stepIndex = 0;
    // Per timespan with an interaction: its slowest one's event and target.
    const interactions = [];
    for (const [itemIndex, item] of request.flow.steps.entries()) {
      const where = {item_index: itemIndex + 1, step_index: stepIndex + 1};
      try {
        if (item.kind === 'navigate') {
          await flow.navigate(item.url, {name: item.name ?? item.url});
          stepIndex += 1;
        } else if (item.kind === 'snapshot') {
          await flow.snapshot({name: item.name});
          stepIndex += 1;
        } else if (item.kind === 'timespan') {
          await flow.startTimespan({name: item.name});
          const watching = item.actions.some((action) => INTERACTING_ACTIONS.has(action.kind))
            ? await watchTimespanInteractions(page) : null;
          for (const [actionIndex, action] of item.actions.entries()) {
            try {
              await runFlowAction(page, action);
            } catch (err) {
              err.pagelabAction = {action_index: actionIndex + 1, action: describeAction(action)};
              throw err;
            }
          }
          if (watching !== null) await settleTimespan(page, watching);
          await flow.endTimespan();
          stepIndex += 1;
          const slowest = watching !== null ? await slowestInteractionOf(page) : null;
          if (slowest) interactions.push({step_index: stepIndex, ...slowest});
        } else {
          try {
            await runFlowAction(page, item);
          } catch (err) {
            err.pagelabAction = {action_index: null, action: describeAction(item)};
            throw err;
          }
        }
      } catch (err) {
        failure = {
          code: err?.pagelabAction ? 'FLOW_ACTION_FAILED' : (typeof err?.code === 'string'
            ? err.code : 'FLOW_STEP_FAILED'),
          message: String(err?.friendlyMessage || err?.message || err),
          ...where, ...(err?.pagelabAction || {}),
        };
        break;
      }
    }
    await control?.session.detach().catch(() => {});
    const secrets = secretsOf(request);
    let steps = 0;
    if (flow._gatherSteps.length) {
      // Scrubbed inside the parsed result, both files made from it (as for a page run).
      const flowResult = scrub(await flow.createFlowResult(), secrets);
      steps = flowResult.steps.length;
      await writeFile(request.flow_path, JSON.stringify(flowResult));
      await writeFile(request.html_path, ReportGenerator.generateFlowReportHtml(flowResult));
      // Each step's own report, as a page run's: the stored test of the step links to it.
      for (const [index, step] of flowResult.steps.entries()) {
        await writeFile(`${request.steps_dir}/step-${index + 1}.html`,
          ReportGenerator.generateReport(step.lhr, 'html'));
      }
    }
    return {blocked: control ? control.blocked : [], steps, failure,
      interactions: scrub(interactions, secrets)};
  });
}

// After Python restarts Chromium between runs (recycling, engine/_recycling.py): connect to
// it and open and close one context with a page, so the next run does not pay for the
// connection or the new browser's first context.
async function warmUp(request) {
  const browser = await browserAt(request.browser_url);
  const context = await browser.createBrowserContext();
  try {
    await context.newPage();
  } finally {
    await context.close().catch(() => {});
  }
  return {};
}

send({
  type: 'ready',
  lighthouse_version: lighthousePackage.version,
  node_version: process.version,
  user_agents: constants.userAgents,
  ad_entities: adEntities.length,
  ad_domains: adPatterns.length,
});

const lines = createInterface({input: process.stdin});
for await (const line of lines) {
  if (!line.trim()) continue;
  let request;
  try {
    request = JSON.parse(line);
  } catch (err) {
    send({type: 'result', id: null, ok: false,
      error: {code: 'ENGINE_PROTOCOL', message: String(err), lighthouse: false}});
    continue;
  }
  try {
    const extra = request.warm ? await warmUp(request)
      : request.flow ? await runFlow(request) : await runOne(request);
    send({type: 'result', id: request.id, ok: true, ...extra});
  } catch (err) {
    const isLighthouseError = Boolean(err?.code && err?.friendlyMessage !== undefined);
    send({
      type: 'result',
      id: request.id,
      ok: false,
      error: {
        code: err?.code && typeof err.code === 'string' ? err.code : 'ENGINE_ERROR',
        message: String(err?.friendlyMessage || err?.message || err),
        lighthouse: isLighthouseError,
      },
    });
  }
}
