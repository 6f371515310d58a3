package jp1

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

func q(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// template writes the SAM template: the runner, a state machine a net,
// the schedule group with its calendar tags and the schedules.
func (c *conv) template() []byte {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	w(`AWSTemplateFormatVersion: "2010-09-09"`)
	w(`Transform: AWS::Serverless-2016-10-31`)
	w(`Description: %s`, q("JP1/AJS3 job nets imported by stepwise import jp1: "+strings.Join(c.app.Nets, ", ")))
	w(``)
	w(`Parameters:`)
	w(`  SchedulerRoleArn:`)
	w(`    Type: String`)
	w(`    Default: "arn:aws:iam::123456789012:role/%s-scheduler"`, c.opts.Stack)
	w(`    Description: The role the schedules start the nets as.`)
	w(``)
	w(`Resources:`)
	w(`  RunnerFunction:`)
	w(`    Type: AWS::Serverless::Function`)
	w(`    Properties:`)
	w(`      FunctionName: %s`, q(c.opts.Stack+"-runner"))
	w(`      Description: Runs a job's command line and judges its exit code.`)
	w(`      Runtime: python3.12`)
	w(`      Handler: runner.handler`)
	w(`      CodeUri: functions/`)
	w(`      Timeout: 900`)
	for _, n := range c.nets {
		w(``)
		w(`  %s:`, n.logical)
		w(`    Type: AWS::Serverless::StateMachine`)
		w(`    Properties:`)
		w(`      Name: %s`, q(n.name))
		w(`      Type: STANDARD`)
		w(`      DefinitionUri: %s`, q("statemachine/"+n.name+".asl.json"))
		w(`      DefinitionSubstitutions:`)
		w(`        RunnerArn: {"Fn::GetAtt": ["RunnerFunction", "Arn"]}`)
		for _, ch := range n.children {
			w(`        %sArn: {"Ref": %s}`, ch.logical, q(ch.logical))
		}
		w(`      Policies:`)
		w(`        - LambdaInvokePolicy: {FunctionName: {"Ref": "RunnerFunction"}}`)
		if len(n.tags) > 0 {
			w(`      Tags:`)
			keys := make([]string, 0, len(n.tags))
			for k := range n.tags {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				w(`        %s: %s`, q(k), q(n.tags[k]))
			}
		}
	}
	if len(c.schedules) > 0 {
		w(``)
		w(`  ScheduleGroup:`)
		w(`    Type: AWS::Scheduler::ScheduleGroup`)
		w(`    Properties:`)
		w(`      Name: %s`, q(c.opts.Stack))
		var tags []schedule
		for _, s := range c.schedules {
			if s.calendarTag != "" {
				tags = append(tags, s)
			}
		}
		if len(tags) > 0 {
			w(`      Tags:`)
			for _, s := range tags {
				w(`        - {Key: %s, Value: %s}`, q("stepwise:calendar/"+s.name), q(s.calendarTag))
			}
		}
		for _, s := range c.schedules {
			w(``)
			w(`  %s:`, s.logical)
			w(`    Type: AWS::Scheduler::Schedule`)
			w(`    Properties:`)
			w(`      Name: %s`, q(s.name))
			w(`      GroupName: {"Ref": "ScheduleGroup"}`)
			w(`      ScheduleExpression: %s`, q(s.expr))
			w(`      ScheduleExpressionTimezone: %s`, q(c.opts.TimeZone))
			w(`      FlexibleTimeWindow: {Mode: "OFF"}`)
			w(`      Target:`)
			w(`        Arn: {"Ref": %s}`, q(s.net))
			w(`        RoleArn: {"Ref": "SchedulerRoleArn"}`)
			w(`        Input: "{}"`)
		}
	}
	w(``)
	w(`Outputs:`)
	for _, n := range c.roots {
		w(`  %sArn:`, n.logical)
		w(`    Value: {"Ref": %s}`, q(n.logical))
	}
	return []byte(b.String())
}

func (c *conv) report() []byte {
	var b strings.Builder
	b.WriteString("# What the import did not carry over\n\n")
	fmt.Fprintf(&b, "State machines: %s.\n\n", strings.Join(c.app.Nets, ", "))
	if len(c.app.Findings) == 0 {
		b.WriteString("Every parameter was carried over.\n")
		return []byte(b.String())
	}
	b.WriteString("| unit | parameter | value | why |\n| --- | --- | --- | --- |\n")
	cell := func(s string) string {
		return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
	}
	for _, f := range c.app.Findings {
		fmt.Fprintf(&b, "| %s | %s | `%s` | %s |\n", cell(f.Unit), cell(f.Param), strings.ReplaceAll(cell(f.Value), "`", "'"), cell(f.Why))
	}
	return []byte(b.String())
}

const runnerPy = `"""Runs a JP1/AJS3 job's command line, as the imported nets' Task states ask.

The event: {"unit": path, "command": line, "workdir": dir, "env": {NAME: VALUE},
"runEnv": {NAME: VALUE}, "judgment": "cod" | "nm" | "ab", "abnormalThreshold": n,
"warningThreshold": n}. runEnv is the run's parameters (the execution input's
env); the job's own env= wins over them. The command runs with /bin/sh, in the
function's environment with both added. With judgment cod (the default), an exit code
above abnormalThreshold (0 unless given), or a signal, ends the job
abnormally: the function raises JobFailed and the Task fails. Otherwise the
result carries the exit code as rc, where a state's warning rule
(stepwise:warning/<state>=rc:1-8) reads it ($.Payload.rc).
"""
import os
import subprocess


class JobFailed(Exception):
    pass


def tail(text, n=2000):
    return text[-n:] if text else ""


def handler(event, context):
    unit = event.get("unit", "")
    env = dict(os.environ)
    run_env = event.get("runEnv") or {}
    if not isinstance(run_env, dict):
        raise ValueError("the run's parameters (the execution input's env) are not an object of NAME: VALUE")
    env.update({str(k): str(v) for k, v in run_env.items()})
    env.update({k: str(v) for k, v in (event.get("env") or {}).items()})
    proc = subprocess.run(event["command"], shell=True, cwd=event.get("workdir") or None,
                          env=env, capture_output=True, text=True)
    code = proc.returncode
    judgment = event.get("judgment", "cod")
    threshold = int(event.get("abnormalThreshold", 0))
    abnormal = judgment == "ab" or (judgment == "cod" and (code < 0 or code > threshold))
    if abnormal:
        raise JobFailed("%s ended abnormally with exit code %d: %s" % (unit, code, tail(proc.stderr, 500).strip()))
    warning = "warningThreshold" in event and code > int(event["warningThreshold"])
    return {"unit": unit, "rc": code, "exitCode": code, "warning": warning,
            "stdout": tail(proc.stdout), "stderr": tail(proc.stderr)}
`
