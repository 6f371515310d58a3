"""An activity worker written with boto3: takes N tasks of an activity and
answers each with its input doubled. Usage: worker.py ENDPOINT ACTIVITY_ARN N"""
import json
import sys

import boto3

endpoint, activity, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
sfn = boto3.client(
    "stepfunctions",
    endpoint_url=endpoint,
    region_name="us-east-1",
    aws_access_key_id="worker",
    aws_secret_access_key="worker",
)
done = 0
while done < count:
    task = sfn.get_activity_task(activityArn=activity, workerName="python-worker")
    token = task.get("taskToken")
    if not token:
        continue
    job = json.loads(task["input"])
    sfn.send_task_success(taskToken=token, output=json.dumps({"doubled": job["n"] * 2}))
    done += 1
print(done)
