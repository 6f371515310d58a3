"""The job net's jobs: one Lambda handler per job (jobs.extract, jobs.load,
jobs.reconcile), each given {"job": ..., "night": ...} and returning
{"job", "night", "rows"}.

A job named in the BROKEN_JOBS environment variable (comma-separated; the
template's BrokenJobs parameter) fails with JobFailed: the state machine
marks it failed in the table and the night fails; deployed again without
it, the job is mended and a redrive of the night runs it again.
"""

import os


class JobFailed(Exception):
    """A job that did not run through: the night marks it FAILED."""


def _broken():
    return {j.strip() for j in os.environ.get("BROKEN_JOBS", "").split(",") if j.strip()}


def _run(job, event, context, rows):
    night = event.get("night", "")
    if job in _broken():
        raise JobFailed(f"{job} failed on night {night}: BROKEN_JOBS names it")
    result = {"job": job, "night": night, "rows": rows}
    if context is not None:
        result["function"] = getattr(context, "function_name", "")
    return result


def extract(event, context=None):
    return _run("extract", event, context, 1200)


def load(event, context=None):
    return _run("load", event, context, 1180)


def reconcile(event, context=None):
    return _run("reconcile", event, context, 20)
