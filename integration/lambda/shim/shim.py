# Stepwise's Python runtime shim for local Lambda functions.
#
# python3 shim.py DIR MODULE.FUNCTION imports the handler once, then serves
# invocations: one JSON line in on standard input
#   {"event": "<event JSON>", "requestId": ..., "functionName": ...,
#    "functionArn": ..., "memoryMb": ..., "deadlineMs": ...,
#    "traceId": X-Ray's header, "traceparent": W3C's (when the caller is traced)}
# The trace headers are the environment's _X_AMZN_TRACE_ID and TRACEPARENT
# during the invocation, as Lambda sets _X_AMZN_TRACE_ID.
# and one JSON line out on the standard output it was started with
#   {"payload": <result>} or {"error": {"errorType", "errorMessage", "stackTrace"}}.
# It first answers {"ready": true} once the import is done (or failed: the
# first invoke then gets the error). What the handler prints goes to
# standard error.
import importlib
import json
import os
import sys
import time
import traceback

# UTF-8 as it is (ensure_ascii=False below); a lone surrogate, which
# UTF-8 cannot hold, is written as its JSON escape.
proto = os.fdopen(os.dup(1), "w", encoding="utf-8", errors="backslashreplace")
os.dup2(2, 1)
sys.stdout = sys.stderr


class LambdaContext:
    def __init__(self, req):
        self.function_name = req["functionName"]
        self.function_version = "$LATEST"
        self.invoked_function_arn = req["functionArn"]
        self.memory_limit_in_mb = str(req["memoryMb"])
        self.aws_request_id = req["requestId"]
        self.log_group_name = "/aws/lambda/" + self.function_name
        self.log_stream_name = "stepwise"
        self.identity = None
        self.client_context = None
        self._deadline_ms = req["deadlineMs"]

    def get_remaining_time_in_millis(self):
        return max(0, int(self._deadline_ms - time.time() * 1000))


def error_of(e, request_id="", tb=None):
    return {
        "errorMessage": str(e),
        "errorType": type(e).__name__,
        "requestId": request_id,
        "stackTrace": traceback.format_tb(tb or e.__traceback__),
    }


def reply(obj):
    proto.write(json.dumps(obj, ensure_ascii=False) + "\n")
    proto.flush()


def main():
    directory, handler_name = sys.argv[1], sys.argv[2]
    sys.path.insert(0, directory)
    os.chdir(directory)
    module_name, _, function_name = handler_name.rpartition(".")
    module_name = module_name.replace("/", ".")
    handler, failed = None, None
    try:
        handler = getattr(importlib.import_module(module_name), function_name)
    except SyntaxError as e:
        failed = {"errorType": "Runtime.UserCodeSyntaxError",
                  "errorMessage": "Syntax error in module '%s': %s" % (module_name, e), "stackTrace": []}
    except ImportError as e:
        message = "Unable to import module '%s': %s" % (module_name, e)
        if (getattr(e, "name", None) or "").split(".")[0] in ("boto3", "botocore"):
            message += (" (Lambda's Python runtime provides boto3; this interpreter, %s, has none:"
                        " install it with %s -m pip install boto3, or run the function on an interpreter"
                        " that has it with serve --runtime RUNTIME=PATH)" % (sys.executable, sys.executable))
        failed = {"errorType": "Runtime.ImportModuleError", "errorMessage": message, "stackTrace": []}
    except AttributeError:
        failed = {"errorType": "Runtime.HandlerNotFound",
                  "errorMessage": "Handler '%s' missing on module '%s'" % (function_name, module_name), "stackTrace": []}
    except Exception as e:
        failed = error_of(e)
        failed["errorMessage"] = "Unable to import module '%s': %s" % (module_name, e)
        failed["errorType"] = "Runtime.ImportModuleError"
    reply({"ready": True})
    for line in sys.stdin:
        req = json.loads(line)
        if failed is not None:
            reply({"error": failed})
            sys.exit(1)
        for var, key in (("_X_AMZN_TRACE_ID", "traceId"), ("TRACEPARENT", "traceparent")):
            if req.get(key):
                os.environ[var] = req[key]
            else:
                os.environ.pop(var, None)
        try:
            result = handler(json.loads(req["event"]), LambdaContext(req))
        except Exception as e:
            # The trace starts in the handler, not in this loop.
            tb = e.__traceback__
            reply({"error": error_of(e, req["requestId"], tb.tb_next or tb)})
            continue
        try:
            out = json.dumps(result, ensure_ascii=False)
        except Exception as e:
            reply({"error": {"errorType": "Runtime.MarshalError",
                             "errorMessage": "Unable to marshal response: %s" % e, "stackTrace": []}})
            continue
        proto.write('{"payload": ' + out + "}\n")
        proto.flush()


main()
