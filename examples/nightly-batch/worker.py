"""A nightly-batch worker in Python with boto3: the same activity as the Go
worker, the same jobs. Usage: python3 worker.py [INBOX [WORK_SECONDS]]
Endpoint, region and keys come from the usual AWS_* environment variables."""
import json, os, sys, time

import boto3
from botocore.config import Config

inbox = sys.argv[1] if len(sys.argv) > 1 else "inbox"
work = float(sys.argv[2]) if len(sys.argv) > 2 else 2
sfn = boto3.client("stepfunctions", config=Config(read_timeout=70))  # polls last up to 60 s
activity = sfn.create_activity(name="nightly-batch")["activityArn"]
while True:
    task = sfn.get_activity_task(activityArn=activity, workerName="python-worker")
    if not task.get("taskToken"):
        continue  # the long poll ended with no task
    job = json.loads(task["input"])
    needs = job.get("needs") and os.path.join(inbox, job["needs"])
    if needs and not os.path.exists(needs):
        print(time.strftime("%H:%M:%S"), "python-worker:", job["job"], "failed:", needs, "is missing", flush=True)
        sfn.send_task_failure(taskToken=task["taskToken"], error="Job.InputMissing",
                              cause=f"{job['job']} of {job['date']}: {needs} is missing")
        continue
    time.sleep(work)  # the job's work
    print(time.strftime("%H:%M:%S"), "python-worker:", job["job"], "done", flush=True)
    sfn.send_task_success(taskToken=task["taskToken"],
                          output=json.dumps({"job": job["job"], "worker": "python-worker"}))
