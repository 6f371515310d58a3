#!/usr/bin/env python3
"""Writes the AWS API models Stepwise embeds: botocore's service-2.json of
each service below, newest API version, stripped of what the aws-sdk
integration does not read (documentation, examples), gzip-compressed.

Run from this directory (go generate ./integration/awssdk/ does):

    python3 generate.py [BOTOCORE_DATA_DIR]

botocore is Apache-2.0 (see NOTICE)."""

import gzip
import json
import os
import sys

SERVICES = [
    "batch", "dynamodb", "ecs", "events", "glue", "kms", "lambda", "s3",
    "secretsmanager", "sns", "sqs", "ssm", "stepfunctions",
]

DROP = {"documentation", "documentationUrl", "examples", "deprecatedMessage", "deprecatedSince"}


def data_dir():
    if len(sys.argv) > 1:
        return sys.argv[1]
    import botocore
    return os.path.join(os.path.dirname(botocore.__file__), "data")


def strip(v):
    if isinstance(v, dict):
        return {k: strip(x) for k, x in v.items() if k not in DROP}
    if isinstance(v, list):
        return [strip(x) for x in v]
    return v


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return json.load(f)


def main():
    root = data_dir()
    for service in SERVICES:
        version = sorted(os.listdir(os.path.join(root, service)))[-1]
        base = os.path.join(root, service, version, "service-2.json")
        model = load(base + ".gz" if os.path.exists(base + ".gz") else base)
        model = {k: strip(model[k]) for k in ("version", "metadata", "operations", "shapes") if k in model}
        text = json.dumps(model, separators=(",", ":")).encode()
        with gzip.GzipFile(service + ".json.gz", "wb", compresslevel=9, mtime=0) as f:
            f.write(text)


if __name__ == "__main__":
    main()
