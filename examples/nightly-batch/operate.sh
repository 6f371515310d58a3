#!/usr/bin/env bash
# A night of the nightly batch operated through each operator control:
# a job held before it runs and released, the night suspended and resumed,
# a held job skipped with an output, a running job killed (the night
# fails), a job ended with warning, the night mended and redriven, and
# the operator log. It prints each command it runs and what it answers.
#
# Run it from the root of the repository against a running server:
#
#   go build -o bin/stepwise ./cmd/stepwise
#   ./bin/stepwise serve --db /tmp/operate.db
#   examples/nightly-batch/operate.sh
#
# It needs Go, the AWS CLI (v1 >= 1.29 or v2 >= 2.13) and curl. Settings:
# STEPWISE (the stepwise binary, ./bin/stepwise), AWS_ENDPOINT_URL (the
# server, http://127.0.0.1:8083), DATE (the night, 2025-07-31), NIGHTLY
# (the example built, else it is built here), WORK (how long a job works,
# 3s).
set -euo pipefail

STEPWISE=${STEPWISE:-./bin/stepwise}
export AWS_ENDPOINT_URL=${AWS_ENDPOINT_URL:-http://127.0.0.1:8083}
export AWS_ACCESS_KEY_ID=${AWS_ACCESS_KEY_ID:-local} AWS_SECRET_ACCESS_KEY=${AWS_SECRET_ACCESS_KEY:-local}
export AWS_DEFAULT_REGION=${AWS_DEFAULT_REGION:-us-east-1} AWS_PAGER=""
DATE=${DATE:-2025-07-31}
WORK=${WORK:-3s}

work=$(mktemp -d)
worker=
cleanup() {
	if [ -n "$worker" ]; then kill "$worker" 2>/dev/null || true; wait "$worker" 2>/dev/null || true; fi
	rm -rf "$work"
}
trap cleanup EXIT
NIGHTLY=${NIGHTLY:-}
if [ -z "$NIGHTLY" ]; then
	NIGHTLY=$work/nightly-batch
	go build -o "$NIGHTLY" ./examples/nightly-batch
fi
INBOX=$work/inbox
mkdir -p "$INBOX"

# The commands as the reader would type them.
stepwise() { "$STEPWISE" "$@" --endpoint "$AWS_ENDPOINT_URL"; }
nightly-batch() { "$NIGHTLY" "$@"; }
step() { printf '\n## %s\n' "$*"; }
run() { printf '$ %s\n' "$*"; eval "$*"; }
states() { # the states the night has entered, in order
	aws stepfunctions get-execution-history --execution-arn "$NIGHT" \
		--query 'events[?stateEnteredEventDetails].stateEnteredEventDetails.name' --output text
}

step "Set up the job net; hold JOB-006 in every night of it, before any starts"
run nightly-batch setup
SM=$(aws stepfunctions list-state-machines --query "stateMachines[?name=='nightly-batch'].stateMachineArn" --output text)
echo "SM=$SM"
run 'stepwise hold $SM --state JOB-006'
run "aws stepfunctions tag-resource --resource-arn \$SM --tags key=stepwise:policy/Fork,value=finish-running 'key=stepwise:warning/JOB-003,value=rc:\$.Output.rc:1-8'"

step "Start a worker (JOB-003 ends with warning, the inbox is empty) and the night of $DATE"
"$NIGHTLY" worker -inbox "$INBOX" -work "$WORK" -warn JOB-003 >"$work/worker.log" 2>&1 &
worker=$!
echo "worker: nightly-batch worker -inbox $INBOX -work $WORK -warn JOB-003"
NIGHT=$(nightly-batch start -date "$DATE")
echo "NIGHT=$NIGHT"
run 'stepwise hold $NIGHT --state JOB-002'

step "Suspend the night while JOB-001 runs: JOB-001 ends, the night enters nothing after it"
run "nightly-batch wait -date $DATE -job JOB-001 -status RUNNING"
run 'stepwise suspend $NIGHT'
run "nightly-batch wait -date $DATE -job JOB-001 -status SUCCEEDED"
sleep 2
run states

step "Resume it: the Fork runs, JOB-002 waits, held; JOB-004 finds no orders.csv and retries"
run 'stepwise resume $NIGHT'
run "nightly-batch wait -date $DATE -job JOB-004 -status RUNNING"
run states

step "Skip JOB-002, held, with an output: JOB-003 runs on it"
run "stepwise skip \$NIGHT --state JOB-002 --output '{\"date\": \"$DATE\", \"jobs\": {\"JOB-002\": {\"skipped\": \"the store feed is late\"}}}'"

step "Kill JOB-004, running: no Retry or Catch takes Ops.Killed, so the night fails once JOB-003 has finished"
run 'stepwise kill $NIGHT --state JOB-004 --error Ops.Killed --cause "orders.csv has not come"'
run "nightly-batch wait -date $DATE -job JOB-004 -status ABORTED"
run "nightly-batch wait -date $DATE -status FAILED"
run "aws stepfunctions describe-execution --execution-arn \$NIGHT --query '[status, error, cause]' --output text"

step "JOB-003 ended with warning (rc 4): amber on the console, counted"
run "curl -fsS \"\$AWS_ENDPOINT_URL/console/executions/status?arn=\$NIGHT\" | python3 -c 'import json, sys; s = json.load(sys.stdin); print(s[\"states\"][\"JOB-003\"], s[\"warnings\"])'"
run "curl -fsS \$AWS_ENDPOINT_URL/metrics | grep '^stepwise_task_warnings_total'"

step "Mend the night (the partner sends orders.csv) and redrive it: JOB-004 and JOB-005 run again, JOB-006 waits, held"
run 'printf "order_id,amount\n1001,19.90\n" > $INBOX/orders.csv'
run 'aws stepfunctions redrive-execution --execution-arn $NIGHT > /dev/null'
run "nightly-batch wait -date $DATE -job JOB-005 -run 1 -status SUCCEEDED"
sleep 2
run "aws stepfunctions describe-execution --execution-arn \$NIGHT --query status --output text"
run states

step "Release JOB-006 in every night of the net: the night ends"
run 'stepwise release $SM --state JOB-006'
run "nightly-batch wait -date $DATE -status SUCCEEDED"
run "aws stepfunctions describe-execution --execution-arn \$NIGHT --query output --output text"

step "The operator log"
run 'stepwise actions $NIGHT'
