"""A job run under `profinject run` and its report, for the Python suites
that check a whole job against its own figures."""
import glob
import json
import os
import subprocess
import sys
import tempfile


def pythons():
    """(minor, path): this Python, then one interpreter per other version found (3.8 to 3.13)"""
    found = {sys.version_info[1]: sys.executable}
    root = os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv"))
    for path in sorted(glob.glob(os.path.join(root, "versions", "3.*", "bin", "python3"))):
        minor = subprocess.run([path, "-c", "import sys; print(sys.version_info[1])"],
                               capture_output=True, text=True).stdout.strip()
        if minor.isdigit() and 8 <= int(minor) <= 13:
            found.setdefault(int(minor), path)
    return sorted(found.items())


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


def analyzer_report(analyze, traces, flag="--json"):
    """The report of @traces by the analyzer @analyze: the JSON (as a dict), the HTML page
    (--html) or the text report (--text: what it prints)."""
    if flag == "--text":
        return subprocess.run([analyze, traces], check=True, capture_output=True,
                              text=True).stdout
    out = os.path.join(tempfile.mkdtemp(), "r")
    subprocess.run([analyze, traces, "--quiet", flag, out], check=True, capture_output=True)
    with open(out) as f:
        return json.load(f) if flag == "--json" else f.read()


def _descendants(pid):
    """@pid and every process below it, parents first, read from /proc."""
    children = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry))
    tree, queue = [], [pid]
    while queue:
        tree.append(queue.pop(0))
        queue += sorted(children.get(tree[-1], []))
    return tree


def _native_stacks(pid):
    """Every thread's native frames of @pid, by the debugger, or why there are none."""
    try:
        return subprocess.run(["gdb", "-batch", "-nx", "-p", str(pid), "-ex",
                               "thread apply all bt 30"], capture_output=True, text=True,
                              timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"(no stacks: {e})"


def run_job(command, timeout, **options):
    """subprocess.run(@command, capture_output=True, text=True, **@options), but a job
    still running after @timeout seconds fails with what it was doing: each process of
    its tree, every thread's native frames, then its output so far. A hang is then
    seen where it happened, not guessed at from a timeout."""
    job = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, **options)
    try:
        out, err = job.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        tree = _descendants(job.pid)
        stacks = [f"--- pid {pid}: {_command_line(pid)}\n{_native_stacks(pid)}" for pid in tree]
        for pid in reversed(tree):
            try:
                os.kill(pid, 9)
            except OSError:
                pass
        out, err = job.communicate()
        raise AssertionError(f"{_short(command)} still ran after {timeout} s; its processes:\n" +
                             "\n".join(stacks) + f"\nstderr:\n{err[-3000:]}") from None
    return subprocess.CompletedProcess(command, job.returncode, out, err)


def _short(command, shown=4):
    """@command with its arguments past the first @shown counted, not listed: a test's output
    is read from its end, where a long command would leave no room for the stacks."""
    words = [str(word) for word in command]
    return " ".join(words[:shown]) + (f" (and {len(words) - shown} more arguments)"
                                      if len(words) > shown else "")


def _command_line(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return _short(f.read().rstrip(b"\0").decode(errors="replace").split("\0"))
    except OSError:
        return "?"
