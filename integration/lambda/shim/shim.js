// Stepwise's Node.js runtime shim for local Lambda functions.
//
// node shim.js DIR FILE.FUNCTION loads the handler once, then serves
// invocations: one JSON line in on standard input, one JSON line out on
// standard output ({"payload": ...} or {"error": {errorType, errorMessage,
// trace}}, the error as Lambda's Node.js runtimes shape it), as shim.py
// does. The console writes to standard error. The caller's trace headers
// are process.env._X_AMZN_TRACE_ID and TRACEPARENT during the invocation.
'use strict';
const fs = require('fs');
const path = require('path');
const readline = require('readline');
const { pathToFileURL } = require('url');

// ES modules do not read NODE_PATH: a bare specifier not found from the
// importing file is looked for in NODE_PATH's folders (the function's
// installed dependencies, its layers, the bundled SDK), as require does.
const nodePath = (process.env.NODE_PATH || '').split(path.delimiter).filter(Boolean);
const nodeModule = require('module');
if (nodePath.length && typeof nodeModule.register === 'function') {
  const parents = nodePath.map((d) => pathToFileURL(path.join(d, '..', '.stepwise-resolve.mjs')).href);
  const hook = `const parents = ${JSON.stringify(parents)};
export async function resolve(specifier, context, next) {
  try {
    return await next(specifier, context);
  } catch (e) {
    if (e?.code !== 'ERR_MODULE_NOT_FOUND' || /^[./]/.test(specifier) || /^[a-z][a-z0-9+.-]*:/i.test(specifier)) throw e;
    for (const parentURL of parents) {
      try { return await next(specifier, { ...context, parentURL }); } catch {}
    }
    throw e;
  }
}`;
  nodeModule.register('data:text/javascript,' + encodeURIComponent(hook));
}

const out = (obj) => fs.writeSync(1, JSON.stringify(obj) + '\n');
for (const k of ['log', 'info', 'debug', 'trace']) console[k] = console.error;
// What the handler writes to standard output goes to standard error too:
// file descriptor 1 carries only the answers.
process.stdout.write = process.stderr.write.bind(process.stderr);

// errorOf is an error as Lambda's Node.js runtimes answer it: an Error's
// name, message and stack lines; anything else thrown, its type and text.
function errorOf(e, type) {
  const isError = e instanceof Error ||
    (e && typeof e.name === 'string' && typeof e.message === 'string' && typeof e.stack === 'string');
  if (isError) {
    return { errorType: type || e.name, errorMessage: e.message, trace: String(e.stack || '').split('\n') };
  }
  return { errorType: type || typeof e, errorMessage: String(e), trace: [] };
}

// The AWS SDK for JavaScript v2 (Lambda's on nodejs16.x and before)
// reads no AWS_ENDPOINT_URL variables: the clients of the one the handler
// would load are given the endpoints the function's environment names
// (the server itself for Step Functions and EventBridge, the --endpoint
// stand-ins for the others), as v3 and boto3 take them.
const v2Services = { stepfunctions: 'SFN', cloudwatchevents: 'EVENTS', eventbridge: 'EVENTBRIDGE' };
function configureSDKv2(dir) {
  let AWS;
  try {
    AWS = require(require.resolve('aws-sdk', { paths: [dir, ...nodePath] }));
  } catch (e) {
    return;
  }
  if (!AWS || !AWS.config || typeof AWS.config.update !== 'function') return;
  const all = process.env.AWS_ENDPOINT_URL;
  const cfg = {};
  for (const k of Object.keys(AWS)) {
    const id = AWS[k] && AWS[k].serviceIdentifier;
    if (typeof id !== 'string') continue;
    const name = v2Services[id] || id.toUpperCase();
    const url = process.env['AWS_ENDPOINT_URL_' + name] || all;
    if (url) cfg[id] = { endpoint: url };
  }
  if (Object.keys(cfg).length) {
    if (cfg.s3) cfg.s3.s3ForcePathStyle = true;
    AWS.config.update(cfg);
  }
}

async function load(dir, handlerName) {
  configureSDKv2(dir);
  const dot = handlerName.lastIndexOf('.');
  const file = handlerName.slice(0, dot);
  const fn = handlerName.slice(dot + 1);
  let mod;
  const base = path.resolve(dir, file);
  const candidates = [base + '.js', base + '.mjs', base + '.cjs'];
  const found = candidates.find((c) => fs.existsSync(c));
  if (!found) {
    throw Object.assign(new Error(`Cannot find module '${file}'`), { lambdaType: 'Runtime.ImportModuleError' });
  }
  try {
    mod = found.endsWith('.mjs') ? await import(pathToFileURL(found).href) : require(found);
  } catch (e) {
    if (e && e.code === 'ERR_REQUIRE_ESM') {
      mod = await import(pathToFileURL(found).href);
    } else {
      throw Object.assign(e, { lambdaType: 'Runtime.ImportModuleError' });
    }
  }
  const h = mod[fn] || (mod.default && mod.default[fn]);
  if (typeof h !== 'function') {
    throw Object.assign(new Error(`${file}.${fn} is undefined or not exported`), { lambdaType: 'Runtime.HandlerNotFound' });
  }
  return h;
}

function context(req) {
  return {
    functionName: req.functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: req.functionArn,
    memoryLimitInMB: String(req.memoryMb),
    awsRequestId: req.requestId,
    logGroupName: '/aws/lambda/' + req.functionName,
    logStreamName: 'stepwise',
    callbackWaitsForEmptyEventLoop: true,
    getRemainingTimeInMillis: () => Math.max(0, req.deadlineMs - Date.now()),
  };
}

// invoke calls the handler, async or callback-style.
function invoke(h, event, ctx) {
  return new Promise((resolve, reject) => {
    let done = false;
    const callback = (err, result) => {
      if (done) return;
      done = true;
      if (err !== null && err !== undefined) reject(err);
      else resolve(result);
    };
    try {
      const r = h(event, ctx, callback);
      if (r && typeof r.then === 'function') {
        r.then((v) => callback(null, v), (e) => callback(e === undefined || e === null ? new Error('rejected') : e));
      } else if (h.length < 3) {
        callback(null, r);
      }
    } catch (e) {
      callback(e);
    }
  });
}

async function main() {
  const [dir, handlerName] = process.argv.slice(2);
  process.chdir(dir);
  let handler;
  let failed;
  try {
    handler = await load(dir, handlerName);
  } catch (e) {
    failed = errorOf(e, e.lambdaType);
  }
  out({ ready: true });
  const rl = readline.createInterface({ input: process.stdin, terminal: false });
  for await (const line of rl) {
    const req = JSON.parse(line);
    if (failed) {
      out({ error: failed });
      process.exit(1);
    }
    for (const [v, k] of [['_X_AMZN_TRACE_ID', 'traceId'], ['TRACEPARENT', 'traceparent']]) {
      if (req[k]) process.env[v] = req[k];
      else delete process.env[v];
    }
    try {
      const result = await invoke(handler, JSON.parse(req.event), context(req));
      const text = JSON.stringify(result === undefined ? null : result);
      fs.writeSync(1, '{"payload": ' + text + '}\n');
    } catch (e) {
      out({ error: errorOf(e) });
    }
  }
}

main();
