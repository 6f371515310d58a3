// Measures the reference jsonata 2.0.6 on the expressions and inputs of
// asl/jsonata/bench_test.go and prints ns/op like go test -bench.
//
//	npm ci && node bench.js
'use strict';
const jsonata = require('jsonata');

function itemsInput() {
  const items = [];
  for (let i = 0; i < 100; i++) {
    items.push({ name: 'item' + i, price: i + 0.5, qty: i % 7, category: i % 3 === 0 ? 'b' : 'a' });
  }
  return { items };
}

const cases = [
  {
    name: 'BenchmarkArithmetic',
    expr: '$states.input.price * $states.input.qty',
    input: undefined,
    bindings: { states: { input: { price: 12.5, qty: 3, sku: 'x-1' } } },
  },
  {
    name: 'BenchmarkFilter100',
    expr: '{"total": $sum(items[price > 50].price), "names": items[category = "a"].name}',
    input: itemsInput(),
    bindings: {},
  },
];

async function measure(c) {
  const e = jsonata(c.expr);
  const run = () => e.evaluate(c.input, c.bindings);
  // Warm up the JIT, then time batches until a second has passed.
  for (let i = 0; i < 20000; i++) await run();
  let n = 0;
  const start = process.hrtime.bigint();
  let elapsed = 0n;
  while (elapsed < 1_000_000_000n) {
    for (let i = 0; i < 1000; i++) await run();
    n += 1000;
    elapsed = process.hrtime.bigint() - start;
  }
  console.log(`${c.name}\t${n}\t${(Number(elapsed) / n).toFixed(0)} ns/op`);
}

(async () => {
  for (const c of cases) await measure(c);
})();
