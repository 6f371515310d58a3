"""One job of the job net: a Lambda handler, and a local function.

As a Lambda function (handler "job.handler") it gets the event and returns
the result; as a local function ("stepwise serve --function
jobnet-job='python3 job.py'") it reads the event on stdin and prints the
result. A job whose flag file <flags>/<job>.broken exists fails with
JobFailed: remove the file and redrive the night.
"""

import json
import os
import sys


class JobFailed(Exception):
    pass


def handler(event, context=None):
    job, flags = event["job"], event.get("flags") or ""
    if flags and os.path.exists(os.path.join(flags, job + ".broken")):
        raise JobFailed(f"{job} is broken: see {flags}/{job}.broken")
    return {"job": job, "night": event["night"], "rows": 100 * (1 + sum(map(ord, job)) % 7)}


if __name__ == "__main__":
    try:
        print(json.dumps(handler(json.load(sys.stdin))))
    except JobFailed as e:
        print(json.dumps({"errorType": "JobFailed", "errorMessage": str(e)}))
        sys.exit(1)
