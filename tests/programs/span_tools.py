"""Calls the marked functions of span_targets a known number of times, from the main
thread and from a worker thread the main thread waits for, while other tools that trace
Python are active, each counting the calls it sees of those functions' own code (the
code objects the job defined, not a wrapper around them):

  settrace     a sys.settrace tracer with a local tracer for every frame, as a debugger
               has (pdb, IDEs), on this thread and the threads started after it
  setprofile   a sys.setprofile profiler ("call" events), likewise
  monitoring   on 3.12+, a sys.monitoring tool under DEBUGGER_ID: PY_START events by
               code; and CALL events made by the job's own code (its files here), as a
               call graph records them: the function called, unwrapped as functools
               leaves a wrapper (__wrapped__); 3.12 sends none for a call with *args of
               a Python function, which the marked functions' wrappers make

  python span_tools.py after    the tools start once span_targets is imported and, under
                                the profiler, marked (its Python half has run)
  python span_tools.py before   the tools start first, then span_targets is imported
                                (under the profiler, once its finder is in
                                sys.meta_path): its functions are marked while they run

Prints one JSON line: the job's own count of each function's calls, each tool's count,
whether each tool was still the one installed at the end, the sys.monitoring tool ids
free before the job took one, whether every call returned what it should, and whether
each function was marked (a wrapper stands where it is defined). No PyTorch, so any
Python 3.8 to 3.13 runs it."""
import json
import os
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
FUNCTIONS = ("handle", "tiny", "outer", "inner", "boom", "Server.serve")
MONITORING = getattr(sys, "monitoring", None)

seen = {"settrace": {}, "setprofile": {}}  # tool -> {code object: calls}
if MONITORING:
    seen.update({"monitoring PY_START": {}, "monitoring CALL": {}})


def count(tool, code):
    counts = seen[tool]
    counts[code] = counts.get(code, 0) + 1


def local_tracer(frame, event, arg):
    # a debugger follows each line of the frames it traces
    return local_tracer


def tracer(frame, event, arg):
    if event == "call":
        count("settrace", frame.f_code)
    return local_tracer


def profiler(frame, event, arg):
    if event == "call":
        count("setprofile", frame.f_code)


def on_start(code, offset):
    count("monitoring PY_START", code)


def on_call(code, offset, called, arg0):
    if os.path.dirname(code.co_filename) != HERE:
        return  # a call made by code other than the job's
    function = getattr(called, "__func__", called)  # a bound method: its function
    while hasattr(function, "__wrapped__"):
        function = function.__wrapped__
    callee = getattr(function, "__code__", None)
    if callee is not None:
        count("monitoring CALL", callee)


def start_tools():
    free = None
    threading.settrace(tracer)  # the threads started from now on
    threading.setprofile(profiler)
    sys.settrace(tracer)
    sys.setprofile(profiler)
    if MONITORING:
        free = [i for i in range(6) if MONITORING.get_tool(i) is None]
        tool = MONITORING.DEBUGGER_ID
        MONITORING.use_tool_id(tool, "span_tools")
        MONITORING.register_callback(tool, MONITORING.events.PY_START, on_start)
        MONITORING.register_callback(tool, MONITORING.events.CALL, on_call)
        MONITORING.set_events(tool, MONITORING.events.PY_START | MONITORING.events.CALL)
    return free


def stop_tools():
    """whether each tool was still the one installed, then each stopped"""
    still = {"settrace": sys.gettrace() is tracer, "setprofile": sys.getprofile() is profiler}
    sys.settrace(None)
    sys.setprofile(None)
    threading.settrace(None)
    threading.setprofile(None)
    if MONITORING:
        tool = MONITORING.DEBUGGER_ID
        still["monitoring"] = (MONITORING.get_tool(tool) == "span_tools" and
                               MONITORING.get_events(tool) ==
                               MONITORING.events.PY_START | MONITORING.events.CALL)
        MONITORING.set_events(tool, 0)
        MONITORING.free_tool_id(tool)
    return still


def work(span_targets, calls):
    """every marked function called, each call's result checked; @calls: the job's own
    count of each function's calls"""
    right = True

    def called(name, times=1):
        calls[name] = calls.get(name, 0) + times

    for i in range(20):
        right &= span_targets.handle(0.0002 * (i % 3)) == sum(range(2000))
        called("handle")
    for _ in range(500):
        right &= span_targets.tiny() == 1
        called("tiny")
    for times in (1, 2, 3, 4):
        right &= span_targets.outer(times) == list(range(times))
        called("outer")
        called("inner", times)  # outer() calls inner() @times times
    try:
        span_targets.boom()
        right = False
    except ValueError:
        pass
    called("boom")
    server = span_targets.Server()
    results = []
    expected = sum(i * i for i in range(3000))

    def serve(times):
        for _ in range(times):
            results.append(server.serve(3000) == expected)

    serve(6)
    # a worker thread (traced too: started after the tools) serving for a few hundred ms
    # under the tracers while the main thread waits for it off the GIL, as a server's
    # main thread waits for its pool: the profiler's requests for the main thread then
    # wait, and must not be the worker's to serve
    thread = threading.Thread(target=serve, args=(30,))
    thread.start()
    thread.join()
    called("Server.serve", 36)
    return right and len(results) == 36 and all(results)


def main():
    mode = sys.argv[1]
    free = None
    profiled = "profinject" in os.environ.get("LD_PRELOAD", "")
    if mode == "before":
        free = start_tools()
        if profiled:
            # the profiler's finder comes at its first safe point, which on 3.8 is the
            # first time the main thread lets another hold the GIL (usually before the
            # script runs, later on a busy machine): it must be in sys.meta_path before the
            # import, for the functions to be marked as they are defined rather than
            # in place after some calls. It is the one finder no module defined (the
            # library ran its code); setuptools' may stand in front of it
            deadline = time.monotonic() + 10
            while all(getattr(f, "__module__", None) != "builtins" for f in sys.meta_path) \
                    and time.monotonic() < deadline:
                time.sleep(0.001)
    sys.path.insert(0, HERE)
    import span_targets

    if mode == "after":
        if profiled:
            # marked at the profiler's first safe point: a sleep lets one come
            deadline = time.monotonic() + 10
            while not hasattr(span_targets.handle, "__profinject_span__") and \
                    time.monotonic() < deadline:
                time.sleep(0.001)
        free = start_tools()
    calls = {}
    right = work(span_targets, calls)
    still = stop_tools()

    # each function's own code: under a wrapper, the one it calls (its __wrapped__)
    functions = {name: getattr(span_targets, name) for name in FUNCTIONS if "." not in name}
    functions["Server.serve"] = span_targets.Server.__dict__["serve"]
    own = {name: getattr(f, "__wrapped__", f).__code__ for name, f in functions.items()}
    tools = {tool: {name: counts.get(code, 0) for name, code in own.items()}
             for tool, counts in seen.items()}
    print(json.dumps({
        "pid": os.getpid(), "python": list(sys.version_info[:2]), "right": right,
        "calls": calls, "tools": tools, "still_installed": still, "free_tool_ids": free,
        "marked": {name: hasattr(f, "__profinject_span__") for name, f in functions.items()}}))


if __name__ == "__main__":
    main()
