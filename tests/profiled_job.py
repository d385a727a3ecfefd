"""A job run under `profinject run` and its report, for the Python suites
that check a whole job against its own figures."""
import json
import os
import subprocess


def run_and_report(launcher, work, command, env=None, timeout=600):
    """Run @command under @launcher with its traces in @work/traces; the
    JSON report (as a dict) and the text report. The job must succeed."""
    traces = os.path.join(work, "traces")
    run = subprocess.run([launcher, "run", "-o", traces, "--", *command],
                         env=env or dict(os.environ), capture_output=True, text=True,
                         timeout=timeout)
    assert run.returncode == 0, run.stderr[-3000:]
    path = os.path.join(work, "report.json")
    text = subprocess.run([launcher, "analyze", traces, "--json", path], check=True,
                          capture_output=True, text=True).stdout
    with open(path) as f:
        return json.load(f), text
