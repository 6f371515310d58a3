// Reads JSON lines {"expr": "...", "input": <json>, "hasInput": bool} from
// stdin and writes one JSON line per case: {"value": <json>}, {} when the
// result is undefined, or {"error": "<code>", "message": "..."}.
'use strict';
const jsonata = require('jsonata');
const readline = require('readline');

// The JSON text of a result as jsonata's own tests compare it: functions
// and undefined members dropped, non-finite numbers as null.
// A function (a jsonata lambda, native or regex matcher) is "" at the top
// and dropped inside arrays and objects, as package jsonata writes it.
function isFunction(x) {
  return typeof x === 'function' || (x !== null && typeof x === 'object' && (x._jsonata_lambda || x._jsonata_function));
}

function strip(x, seen = new Set()) {
  if (x === null || typeof x !== 'object' || x instanceof RegExp) return x;
  if (seen.has(x)) {
    const e = new TypeError('Converting circular structure to JSON');
    throw e;
  }
  seen.add(x);
  let out;
  if (Array.isArray(x)) {
    out = x.filter((e) => e !== undefined && !isFunction(e)).map((e) => strip(e, seen));
  } else {
    out = {};
    for (const k of Object.keys(x)) {
      if (x[k] !== undefined && !isFunction(x[k])) out[k] = strip(x[k], seen);
    }
  }
  seen.delete(x);
  return out;
}

function encode(v) {
  if (isFunction(v)) return '""';
  return JSON.stringify(strip(v));
}

async function evaluate(c) {
  let expr;
  try {
    expr = jsonata(c.expr);
  } catch (e) {
    return { error: e.code || e.name || 'Error', message: String(e.message) };
  }
  try {
    const v = await expr.evaluate(c.hasInput ? c.input : undefined, c.bindings || {});
    if (v === undefined) return {};
    const text = encode(v);
    if (text === undefined) return {};
    return { value: JSON.parse(text) };
  } catch (e) {
    return { error: e.code || e.name || 'Error', message: String(e.message) };
  }
}

async function main() {
  const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  for await (const line of rl) {
    if (!line.trim()) continue;
    const res = await evaluate(JSON.parse(line));
    process.stdout.write(JSON.stringify(res) + '\n');
  }
}

main();
