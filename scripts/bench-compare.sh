#!/usr/bin/env bash
# Compare the server of two revisions under the same load: build both,
# run "stepwise bench" of each in turn (BASE, HEAD, BASE, HEAD, ...) and
# print each figure's median for both and their ratio.
#
#   scripts/bench-compare.sh [-n PAIRS] BASE HEAD [-- BENCH ARGS]
#
# BASE and HEAD are git revisions (the working tree's uncommitted changes
# are not built: commit them first). HEAD's bench drives both servers
# (bench --server-binary), so only the server differs between the runs;
# HEAD must have "stepwise bench --json". PAIRS defaults to 2. The runs'
# reports and figures stay in the folder printed at the end.
set -euo pipefail

pairs=2
if [[ ${1:-} == -n ]]; then
	pairs=${2:?-n needs a number of pairs}
	shift 2
fi
if [[ $# -lt 2 || ( $# -gt 2 && $3 != -- ) ]]; then
	echo "usage: $0 [-n PAIRS] BASE HEAD [-- BENCH ARGS]" >&2
	exit 2
fi
if ! [[ $pairs =~ ^[1-9][0-9]*$ ]]; then
	echo "$0: -n: a number of pairs, at least 1, not '$pairs'" >&2
	exit 2
fi
base_rev=$1 head_rev=$2
shift 2
[[ $# -gt 0 ]] && shift # the --
bench_args=("$@")
if [[ ${#bench_args[@]} -eq 0 ]]; then
	# A moderate load: transitions, StartSyncExecution, activity tasks,
	# resident memory at rest.
	bench_args=(--runs 3000 --sync-calls 3000 --activity-runs 300 --warmup 300 --rest 2s --server-arg=--log-level=warn)
fi

repo=$(git rev-parse --show-toplevel)
base=$(git -C "$repo" rev-parse --verify "$base_rev^{commit}")
head=$(git -C "$repo" rev-parse --verify "$head_rev^{commit}")
work=$(mktemp -d "${TMPDIR:-/tmp}/bench-compare-build.XXXXXX")
out=$(mktemp -d "${TMPDIR:-/tmp}/bench-compare.XXXXXX")
trap 'rm -rf "$work"' EXIT

for side in base head; do
	rev=$base
	[[ $side == head ]] && rev=$head
	echo "building $side ${rev:0:12}" >&2
	# A checkout of rev of its own (git archive: the repository's list of
	# worktrees is left alone).
	mkdir "$work/src-$side"
	git -C "$repo" archive "$rev" | tar -x -C "$work/src-$side"
	(cd "$work/src-$side" && go build -o "$work/$side" ./cmd/stepwise)
done
if ! "$work/head" bench --help | grep -q -- --server-binary; then
	echo "$0: HEAD ${head:0:12} has no \"stepwise bench --json --server-binary\" to drive the runs" >&2
	exit 1
fi

for ((i = 1; i <= pairs; i++)); do
	for side in base head; do
		echo "run $i of $pairs: $side" >&2
		"$work/head" bench --json --server-binary "$work/$side" "${bench_args[@]}" \
			>>"$out/$side.jsonl" 2>"$out/$side-$i.txt"
	done
done

echo "BASE ${base:0:12} ($base_rev), HEAD ${head:0:12} ($head_rev), bench ${bench_args[*]}"
"$work/head" bench compare "$out/base.jsonl" "$out/head.jsonl"
echo "runs' reports and figures: $out" >&2
