// pagelab's Node side of the local engine: a long-lived process that drives Lighthouse.
//
// Protocol (one JSON object per line):
//   stdout <- {"type": "ready", "lighthouse_version", "node_version", "user_agents"}
//   stdin  -> {"id", "url", "browser_url", "config", "lhr_path", "html_path", "secrets": [...]}
//   stdout <- {"type": "result", "id", "ok": true}
//          |  {"type": "result", "id", "ok": false, "error": {"code", "message", "lighthouse"}}
// Python owns Chromium (it starts, restarts and kills it); this process only connects to it.
// Each run gets a fresh browser context, so no cookie, cache or storage survives a run.

import {createInterface} from 'node:readline';
import {readFile, writeFile} from 'node:fs/promises';
import path from 'node:path';
import {pathToFileURL} from 'node:url';

const engineDir = process.env.PAGELAB_ENGINE_DIR;
const fromEngine = (rel) => import(pathToFileURL(path.join(engineDir, 'node_modules', rel)).href);

const {default: lighthouse} = await fromEngine('lighthouse/core/index.js');
const {ReportGenerator} = await fromEngine('lighthouse/report/generator/report-generator.js');
const constants = await fromEngine('lighthouse/core/config/constants.js');
const {default: puppeteer} = await fromEngine('puppeteer-core/lib/puppeteer/puppeteer-core.js');
const lighthousePackage = JSON.parse(
  await readFile(path.join(engineDir, 'node_modules', 'lighthouse', 'package.json'), 'utf8'));

const send = (message) => process.stdout.write(JSON.stringify(message) + '\n');

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
function scrub(text, secrets) {
  let out = text;
  for (const secret of secrets) {
    if (secret) out = out.split(secret).join('***');
  }
  return out;
}

async function runOne(request) {
  const browser = await browserAt(request.browser_url);
  const context = await browser.createBrowserContext();
  try {
    const page = await context.newPage();
    const config = request.config;
    const settings = config.settings;
    if (settings.emulatedUserAgent === null) {
      settings.emulatedUserAgent = constants.userAgents[settings.formFactor];
    }
    const result = await lighthouse(request.url, {logLevel: 'error'}, config, page);
    if (!result) throw new Error('Lighthouse returned no result');
    const lhr = result.lhr;
    if (lhr.configSettings?.extraHeaders) {
      lhr.configSettings.extraHeaders = Object.fromEntries(
        Object.keys(lhr.configSettings.extraHeaders).map((name) => [name, '***']));
    }
    const secrets = request.secrets || [];
    await writeFile(request.lhr_path, scrub(ReportGenerator.generateReport(lhr, 'json'), secrets));
    await writeFile(request.html_path, scrub(ReportGenerator.generateReport(lhr, 'html'), secrets));
  } finally {
    await context.close().catch(() => {});
  }
}

send({
  type: 'ready',
  lighthouse_version: lighthousePackage.version,
  node_version: process.version,
  user_agents: constants.userAgents,
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
    await runOne(request);
    send({type: 'result', id: request.id, ok: true});
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
