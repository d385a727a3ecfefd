#!/usr/bin/env python3
"""CUDA interception against the test double (tests/fake_cuda): programs
whose allocations, copies and kernel durations are fixed in their source
run under the preload, and the report must give those numbers back.

Run by ctest with the build's paths in the environment."""
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import browser  # noqa: E402

ANALYZE = os.environ["PI_ANALYZE"]
PRELOAD = os.environ["PI_PRELOAD"]
TESTING_PRELOAD = os.environ["PI_TESTING_PRELOAD"]  # honours the PROFINJECT_TEST_* settings
PROGRAMS = os.environ["PI_PROGRAMS"]
MiB = 1 << 20


def record(program, env=None, *args):
    traces = tempfile.mkdtemp()
    environment = dict(os.environ, LD_PRELOAD=PRELOAD, PROFINJECT_OUTPUT=traces)
    environment.update(env or {})
    result = subprocess.run([os.path.join(PROGRAMS, program), *args], env=environment,
                            capture_output=True, text=True, timeout=120)
    return traces, result


def report(traces):
    out = os.path.join(tempfile.mkdtemp(), "r.json")
    subprocess.run([ANALYZE, traces, "--quiet", "--json", out], check=True, capture_output=True)
    with open(out) as f:
        return json.load(f)


def dump(traces):
    return "".join(subprocess.run([ANALYZE, "dump", os.path.join(traces, name)], check=True,
                                  capture_output=True, text=True).stdout
                   for name in sorted(os.listdir(traces)))


def entries(rep, group):
    return {(e["name"], e["class"]): e for e in rep["latency"] if e["group"] == group}


class RuntimeProgram(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.traces, result = record("prog_cuda_runtime")
        assert result.returncode == 0 and result.stdout == "ok\n", result
        cls.report = report(cls.traces)
        [cls.process] = cls.report["processes"]

    def test_allocations_frees_and_leaks_come_back_exactly(self):
        memory = self.process["gpu_memory"]
        self.assertEqual(memory["allocations"], 3)
        self.assertEqual(memory["frees"], 2)
        self.assertEqual(memory["allocated_bytes"], 7 * MiB)
        self.assertEqual(memory["peak_bytes"], 7 * MiB)
        self.assertEqual(memory["live_at_end_bytes"], 4 * MiB)
        self.assertEqual(memory["pinned_host_peak_bytes"], 1 * MiB)
        self.assertEqual(memory["devices"], [{"device": 0, "peak_bytes": 7 * MiB,
                                              "live_at_end_bytes": 4 * MiB}])
        [leak] = memory["never_freed"]
        self.assertEqual((leak["bytes"], leak["count"]), (4 * MiB, 1))
        self.assertTrue(leak["stack"]["text"].startswith("main+"), leak["stack"])

    def test_call_stacks_without_libunwind(self):
        """GPU images often lack libunwind.so.8: glibc's backtrace() walks the stack instead."""
        traces, result = record("prog_cuda_runtime", {"PROFINJECT_TEST_NO_LIBUNWIND": "1",
                                                       "LD_PRELOAD": TESTING_PRELOAD})
        self.assertEqual((result.returncode, result.stdout), (0, "ok\n"), result.stderr)
        [process] = report(traces)["processes"]
        [leak] = process["gpu_memory"]["never_freed"]
        self.assertEqual((leak["bytes"], leak["count"]), (4 * MiB, 1))
        self.assertTrue(leak["stack"]["text"].startswith("main+"), leak["stack"])

    def test_kernel_names_demangled_and_each_launch_counted_once(self):
        kernels = entries(self.report, "kernel")
        self.assertEqual({name for name, _ in kernels},
                         {"scale(float*, int)", "void reduce<float>(float const*, float*)"})
        # 20 on the default stream, 1 per-thread-stream, 2 threads x 10
        self.assertEqual(kernels[("scale(float*, int)", "launch")]["count"], 41)
        self.assertEqual(kernels[("void reduce<float>(float const*, float*)", "launch")]["count"], 10)

    def test_gpu_durations_match_the_programs_within_5_percent(self):
        gpu = entries(self.report, "gpu")
        reduce = gpu[("void reduce<float>(float const*, float*)", "kernel")]
        self.assertEqual(reduce["count"], 10)
        for key in ("p50_ns", "max_ns"):
            self.assertAlmostEqual(reduce[key], 5e6, delta=0.05 * 5e6)
        scale = gpu[("scale(float*, int)", "kernel")]
        self.assertEqual(scale["count"], 41)
        expected = 20 * 2e6 + 21 * 1e6
        self.assertAlmostEqual(scale["total_ns"], expected, delta=0.05 * expected)
        self.assertEqual(self.report["gpu"]["timing"], "events")
        self.assertTrue(self.report["gpu"]["timing_reason"])

    def test_copies_by_direction_and_pinned_or_pageable(self):
        copies = entries(self.report, "copy")
        expected = {("HtoD", "pageable 64KiB-1MiB"): 256 << 10,
                    ("HtoD", "pinned 64KiB-1MiB"): 256 << 10,
                    ("DtoH", "pageable 64KiB-1MiB"): 128 << 10,
                    ("DtoD", "- 64KiB-1MiB"): 64 << 10,
                    ("memset", "- <64KiB"): 32 << 10}
        self.assertEqual({k: (v["count"], v["bytes"]) for k, v in copies.items()},
                         {k: (1, b) for k, b in expected.items()})

    def test_threads_on_their_own_streams(self):
        launches = re.findall(r"tid=(\d+) gpu_launch cudaLaunchKernel .* stream=(\d+) dur_ns",
                              dump(self.traces))
        by_thread = {}
        for tid, stream in launches:
            by_thread.setdefault(tid, set()).add(int(stream))
        workers = [streams for tid, streams in by_thread.items() if tid != str(self.process["pid"])]
        self.assertEqual(len(workers), 2)
        self.assertEqual(len(workers[0] | workers[1]), 2, "one stream each")
        self.assertTrue(all(min(s) >= 3 for s in workers), "created streams, not the default")

    def test_chrome_trace_links_launches_to_gpu_work(self):
        path = os.path.join(tempfile.mkdtemp(), "trace.json")
        subprocess.run([ANALYZE, self.traces, "--quiet", "--chrome-trace", path], check=True,
                       capture_output=True)
        with open(path) as f:
            events = json.load(f)["traceEvents"]
        starts = {e["id"] for e in events if e["ph"] == "s"}
        ends = {e["id"] for e in events if e["ph"] == "f"}
        self.assertEqual(len(ends), 41 + 10 + 4 + 1, "every timed launch and copy has an arrow")
        self.assertLessEqual(ends, starts, "each arrow starts at a launch")
        self.assertTrue(any(e["ph"] == "M" and e["args"]["name"] == "GPU" for e in events))
        counters = [e["args"]["MB"] for e in events if e["ph"] == "C" and e["name"] == "device memory"]
        self.assertAlmostEqual(max(counters), 7 * MiB / 1e6, places=3)

    def test_a_host_waiting_for_a_busy_gpu_is_gpu_bound(self):
        # the host launches 90 ms of kernels and waits in cudaDeviceSynchronize
        # while the GPU runs them: the GPU is the reason, not the synchronisation
        first = self.report["verdict"][0]
        self.assertEqual(first["kind"], "gpu-bound", first)
        self.assertGreaterEqual(first["evidence"]["gpu_busy_share"], 0.8)
        self.assertNotIn("sync-bound", [f["kind"] for f in self.report["verdict"]])


class DriverOnlyProgram(unittest.TestCase):
    """Reaches the driver only through dlsym and cuGetProcAddress, as cuBLAS does."""

    @classmethod
    def setUpClass(cls):
        cls.traces, result = record("prog_cuda_driver")
        assert result.returncode == 0 and result.stdout == "ok\n", result
        cls.report = report(cls.traces)
        [cls.process] = cls.report["processes"]

    def test_memory_through_proc_address_dlsym_and_vmm(self):
        memory = self.process["gpu_memory"]
        self.assertEqual(memory["allocations"], 3)  # 8 MiB, 16 MiB, 2 MiB VMM chunk
        self.assertEqual(memory["peak_bytes"], 26 * MiB)
        self.assertEqual(memory["live_at_end_bytes"], 16 * MiB)

    def test_kernels_named_from_module_and_library_lookups(self):
        gpu = entries(self.report, "gpu")
        self.assertEqual(gpu[("kernel(float*)", "kernel")]["count"], 5)
        self.assertEqual(gpu[("gemm()", "kernel")]["count"], 4)
        self.assertAlmostEqual(gpu[("kernel(float*)", "kernel")]["p50_ns"], 3e6, delta=0.05 * 3e6)
        self.assertAlmostEqual(gpu[("gemm()", "kernel")]["p50_ns"], 2e6, delta=0.05 * 2e6)


def control(directory, pid, line):
    """one line to a process's control socket, its answer back"""
    # <pid>.<its PID namespace>.sock (include/profinject/control_protocol.h), made at the
    # process's first flush (100 ms in)
    path = os.path.join(directory, f"{pid}.{os.stat(f'/proc/{pid}/ns/pid').st_ino}.sock")
    for _ in range(500):
        if os.path.exists(path):
            break
        time.sleep(0.02)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(10)
        # the path is there from bind, a moment before listen: a refusal then is retried
        for attempt in range(20):
            try:
                s.connect(path)
                break
            except ConnectionRefusedError:
                if attempt == 19:
                    raise
                time.sleep(0.005)
        s.sendall(line.encode() + b"\n")
        return s.recv(256).decode()


def paused_program(name, *args, env=None):
    """@name started paused, its control socket in a private directory:
    (process, socket directory, trace directory)."""
    traces, sockets = tempfile.mkdtemp(), tempfile.mkdtemp()
    os.chmod(sockets, 0o700)
    environment = dict(os.environ, LD_PRELOAD=PRELOAD, PROFINJECT_OUTPUT=traces,
                       PROFINJECT_PAUSED="1", PROFINJECT_CONTROL_DIR=sockets, **(env or {}))
    program = subprocess.Popen([os.path.join(PROGRAMS, name), *args], env=environment,
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    return program, sockets, traces


def say(program, line):
    """one line to @program's input; the line it answers"""
    program.stdin.write(line + "\n")
    program.stdin.flush()
    return program.stdout.readline()


def gpu_times(text):
    """(correlation, gpu ns, source) of every GPU_TIME record in a dump"""
    return [tuple(map(int, m)) for m in
            re.findall(r"gpu_time correlation=(\d+) gpu_ns=(\d+) source=(\d+)", text)]


def lost_gpu_times(text):
    """durations counted as lost (LOST records of reason 4, GPU time)"""
    return sum(int(n) for n in re.findall(r" lost count=(\d+) reason=4", text))


def cupti_env(**extra):
    return dict(LD_LIBRARY_PATH=os.environ["PI_FAKE_CUPTI"], **extra)


class Cupti(unittest.TestCase):
    """CUPTI's activity API through the fake libcupti, which behaves as the
    real one is documented to (tests/fake_cuda/fake_cupti.c)."""

    @classmethod
    def setUpClass(cls):
        cls.log = os.path.join(tempfile.mkdtemp(), "cupti.log")
        cls.traces, result = record("prog_cuda_runtime", cupti_env(FAKE_CUPTI_LOG=cls.log))
        assert result.stdout == "ok\n", result.stderr
        cls.report = report(cls.traces)
        cls.text = dump(cls.traces)
        with open(cls.log) as f:
            cls.calls = f.read().splitlines()

    def test_gpu_time_of_each_kernel_from_cupti(self):
        self.assertEqual(self.report["gpu"]["timing"], "cupti")
        gpu = entries(self.report, "gpu")
        reduce = gpu[("void reduce<float>(float const*, float*)", "kernel")]
        self.assertEqual(reduce["count"], 10)
        self.assertAlmostEqual(reduce["p50_ns"], 5e6, delta=0.05 * 5e6)
        scale = gpu[("scale(float*, int)", "kernel")]
        self.assertEqual(scale["count"], 41)
        self.assertAlmostEqual(scale["total_ns"], 61e6, delta=0.05 * 61e6)

    def test_every_launch_copy_and_set_gets_its_own_duration(self):
        times = gpu_times(self.text)
        launched = [re.search(r"correlation=(\d+)", line).group(1)
                    for line in self.text.splitlines()
                    if re.search(r" gpu_(launch|copy) ", line) and " nested " not in line]
        self.assertEqual(sorted(c for c, _, _ in times), sorted(map(int, launched)))
        self.assertEqual(len(times), 41 + 10 + 4 + 1)
        self.assertEqual({source for _, _, source in times}, {2})
        self.assertEqual(lost_gpu_times(self.text), 0)
        # a copy takes bytes / 10 per ns + 1 us on the fake device, a set 1 us
        copies = {int(c): int(b) for b, c in
                  re.findall(r"gpu_copy \w+ [^=]*bytes=(\d+) correlation=(\d+) stream=\d+ dur",
                             self.text)}
        memset = int(re.search(r"gpu_copy cudaMemset memset bytes=\d+ correlation=(\d+)",
                               self.text).group(1))
        checked = 0
        for correlation, ns, _ in times:
            if correlation in copies:
                expected = 1000 if correlation == memset else copies[correlation] / 10 + 1000
                self.assertAlmostEqual(ns, expected, delta=0.01 * expected)
                checked += 1
        self.assertEqual(checked, 5)

    def test_gpu_work_starts_after_its_call_began_on_the_host_clock(self):
        path = os.path.join(tempfile.mkdtemp(), "trace.json")
        subprocess.run([ANALYZE, self.traces, "--quiet", "--chrome-trace", path], check=True,
                       capture_output=True)
        with open(path) as f:
            events = json.load(f)["traceEvents"]
        called = {(e["pid"] << 32) | e["args"]["correlation"]: e["ts"] for e in events
                  if e["ph"] == "X" and e["cat"] == "cuda" and "correlation" in e["args"]}
        started = {e["id"]: e["ts"] for e in events if e["ph"] == "f"}
        self.assertEqual(len(started), 56)
        early = [i for i in started if started[i] < called[i] - 1]
        self.assertEqual(early, [], "GPU work starts after its call began, on the host's clock")

    def test_session_asks_cupti_nothing_per_launch(self):
        calls = self.calls
        self.assertEqual([c for c in calls if c in ("push", "pop")], [],
                         "no external correlation id pushed or popped per launch")
        self.assertIn("enable 10", calls, "CONCURRENT_KERNEL")
        self.assertNotIn("enable 3", calls, "never KERNEL, which serialises kernels")
        self.assertLess(calls.index("register-timestamp-callback"), calls.index("enable 10"),
                        "our clock before the first kind")
        self.assertLess(calls.index("subscribe profinject 0"), calls.index("enable 10"))
        self.assertIn("thread-id-type 1", calls)
        # API records of the calls we time, not of every call: the kinds on (RUNTIME 5,
        # DRIVER 4), then each id switched; cudaLaunchKernel_v7000 is 211, cudaGetDevice_v3020
        # 17 and cudaStreamIsCapturing_v10000 317 (PyTorch calls both around every op)
        runtime = api_ids_on(calls[:calls.index("flush 1")], "enable 5", "runtime-api")
        self.assertIn(211, runtime)
        self.assertFalse({17, 317} & runtime, "not every runtime call")
        self.assertLess(len(runtime), 40)
        self.assertLess(len(api_ids_on(calls[:calls.index("flush 1")], "enable 4", "driver-api")),
                        40, "not every driver call")
        # at exit: everything forced out, recording off, the subscription released,
        # CUPTI's thread id type as we found it
        end = calls[calls.index("flush 1"):]
        self.assertEqual([c for c in end if not c.startswith(("runtime-api", "driver-api"))],
                         ["flush 1", "disable 10", "disable 1", "disable 2", "disable 5",
                          "disable 4", "unsubscribe", "thread-id-type 0"])


def api_ids_on(calls, kind_on, switch, ids=range(1, 512)):
    """The ids of one API domain whose records the fake CUPTI's call log left on:
    all of them once @kind_on came, then each "@switch ID 0|1" in turn. Of the
    ids below 512, which both domains of CUDA 13's CUPTI name."""
    on = set()
    for call in calls:
        if call == kind_on:
            on = set(ids)
        elif call.startswith(switch + " "):
            _, cbid, enable = call.split()
            if int(cbid) in ids:
                (on.add if enable == "1" else on.discard)(int(cbid))
    return on


class CuptiFlushes(unittest.TestCase):
    """CUPTI's worker returns only full buffers: the rest must be flushed out
    at every moment the trace could otherwise lose them."""

    def phases(self, mode, env=None, *args):
        traces, result = record("prog_cuda_phases", cupti_env(**(env or {})), mode, *args)
        self.assertEqual(result.returncode, 0, result.stderr)
        return dump(traces)

    def test_at_exit(self):
        text = self.phases("exit")
        times = gpu_times(text)
        self.assertEqual(len(times), 10)
        for _, ns, source in times:
            self.assertEqual(source, 2)
            self.assertAlmostEqual(ns, 1e6, delta=0.01 * 1e6)

    def test_before_exec(self):
        # the image it execs records marks: an image that records nothing leaves no file
        traces, result = record("prog_cuda_phases", cupti_env(), "exec",
                                os.path.join(PROGRAMS, "prog_status"))
        self.assertEqual(result.returncode, 0, result.stderr)
        files = sorted(os.listdir(traces))
        self.assertEqual(len(files), 2, "the program and the image it exec'd")
        texts = [subprocess.run([ANALYZE, "dump", os.path.join(traces, f)], check=True,
                                capture_output=True, text=True).stdout for f in files]
        [launcher] = [t for t in texts if "gpu_launch" in t]
        self.assertIn(" exec ", launcher)
        self.assertEqual(len(gpu_times(launcher)), 10, "written before the image went")

    def test_periodically_while_the_program_runs(self):
        traces = tempfile.mkdtemp()
        environment = dict(os.environ, LD_PRELOAD=PRELOAD, PROFINJECT_OUTPUT=traces, **cupti_env())
        program = subprocess.Popen([os.path.join(PROGRAMS, "prog_cuda_phases"), "wait"],
                                   env=environment, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                   text=True)
        try:
            self.assertEqual(program.stdout.readline(), "launched\n")
            deadline = time.monotonic() + 10
            found = 0
            while time.monotonic() < deadline and found < 10:
                time.sleep(0.1)
                found = len(gpu_times(dump(traces)))
            self.assertEqual(found, 10, "GPU times of a running program reach its trace")
            program.stdin.write("end\n")
            program.stdin.flush()
            self.assertEqual(program.wait(timeout=30), 0)
        finally:
            program.kill()

    def test_unfinished_work_is_counted_as_lost(self):
        text = self.phases("unfinished")
        self.assertEqual(len(gpu_times(text)), 10)
        self.assertEqual(lost_gpu_times(text), 1, "the 300 ms kernel still running at exit")

    def test_records_cupti_dropped_are_counted_as_lost(self):
        text = self.phases("exit", {"FAKE_CUPTI_DROP": "3"})
        self.assertEqual(len(gpu_times(text)), 7)
        self.assertEqual(lost_gpu_times(text), 3)

    def test_a_source_that_timed_nothing_says_so(self):
        """Every GPU record dropped: the report says the durations are missing, not that
        the GPU was idle."""
        traces, result = record("prog_cuda_runtime", cupti_env(FAKE_CUPTI_DROP="1000000"))
        self.assertEqual(result.returncode, 0, result.stderr)
        text = subprocess.run([ANALYZE, traces], check=True, capture_output=True,
                              text=True).stdout
        self.assertIn("none of the 51 kernel launches got a GPU duration from CUPTI", text)
        traces, result = record("prog_cuda_runtime", cupti_env())
        text = subprocess.run([ANALYZE, traces], check=True, capture_output=True,
                              text=True).stdout
        self.assertNotIn("got a GPU duration", text)

    def test_when_a_capture_window_closes(self):
        program, sockets, traces = paused_program("prog_cuda_phases", "window", env=cupti_env())
        try:
            self.assertEqual(program.stdout.readline(), "ready\n")
            for window in range(2):
                self.assertIn("recording", control(sockets, program.pid, "start"))
                self.assertEqual(say(program, "go"), "done\n")
                control(sockets, program.pid, "stop")
                # launches while no window is open: not recorded, not timed, not lost
                self.assertEqual(say(program, "go"), "done\n")
            say(program, "end")
            self.assertEqual(program.wait(timeout=30), 0)
        finally:
            program.kill()
        text = dump(traces)
        self.assertEqual(len(re.findall(r" gpu_launch ", text)), 20)
        self.assertEqual(len(gpu_times(text)), 20, "each window's GPU times written before it closed")
        self.assertEqual(lost_gpu_times(text), 0)


class CuptiFallback(unittest.TestCase):
    """When CUPTI cannot be used, event pairs time the launches and the trace says why."""

    def fallback(self, env):
        traces, result = record("prog_cuda_runtime", env)
        self.assertEqual(result.stdout, "ok\n", result.stderr)
        rep = report(traces)
        self.assertEqual(rep["gpu"]["timing"], "events")
        reduce = entries(rep, "gpu")[("void reduce<float>(float const*, float*)", "kernel")]
        self.assertEqual(reduce["count"], 10)
        self.assertAlmostEqual(reduce["p50_ns"], 5e6, delta=0.05 * 5e6)
        return rep["gpu"]["timing_reason"]

    def test_libcupti_missing(self):
        reason = self.fallback({"LD_LIBRARY_PATH": os.environ["PI_NO_CUPTI"]})
        self.assertIn("libcupti not found", reason)

    def test_cupti_refused(self):
        self.assertIn("error 35", self.fallback(cupti_env(FAKE_CUPTI_ERROR="35")))

    def test_another_tool_holds_cupti(self):
        reason = self.fallback(cupti_env(FAKE_CUPTI_SUBSCRIBER="Nsight Systems"))
        self.assertIn("held by another client (Nsight Systems)", reason)

    def test_a_later_client_gets_cupti_and_events_take_over(self):
        """The program subscribes to CUPTI itself, as torch.profiler does: it
        gets every kernel of its own, and our launches stay timed."""
        traces, result = record("prog_cupti_client", cupti_env())
        self.assertEqual(result.returncode, 0, result.stderr)
        kernels, ns, clock, ids = re.fullmatch(r"client (\d+) (\d+) (\S+) (\S+)\n",
                                               result.stdout).groups()
        kernels, ns = int(kernels), int(ns)
        self.assertEqual((clock, ids), ("realtime", "default"),
                         "CUPTI's clock and thread ids as they were before us")
        self.assertEqual(kernels, 5)
        self.assertAlmostEqual(ns, 5 * 2e6, delta=0.01 * 5 * 2e6)
        text = dump(traces)
        sources = [source for _, _, source in gpu_times(text)]
        self.assertEqual(sources, [2] * 10 + [1] * 5)
        self.assertRegex(text, r"gpu_timing source=1 code=0 reason=\"CUPTI handed over to "
                               r"another client \(it called cuptiSubscribe\); event pairs")


class NvccLaunchPath(unittest.TestCase):
    """CUDA 13's <<<>>>: __cudaGetKernel once per kernel, __cudaLaunchKernel per launch."""

    def check(self, env):
        traces, result = record("prog_cuda_nvcc13", env)
        self.assertEqual(result.stdout, "ok\n", result.stderr)
        rep = report(traces)
        kernels = entries(rep, "kernel")
        self.assertEqual({k: v["count"] for k, v in kernels.items()},
                         {("busy(unsigned long long)", "launch"): 30,
                          ("tick(unsigned long long)", "launch"): 25})
        calls = entries(rep, "cuda")
        self.assertEqual(calls[("__cudaLaunchKernel", "runtime")]["count"], 55)
        self.assertNotIn(("cuLaunchKernel", "driver"), calls, "the runtime's launch counts once")
        gpu = entries(rep, "gpu")
        self.assertAlmostEqual(gpu[("busy(unsigned long long)", "kernel")]["total_ns"], 60e6,
                               delta=0.05 * 60e6)
        self.assertAlmostEqual(gpu[("tick(unsigned long long)", "kernel")]["total_ns"], 25e6,
                               delta=0.05 * 25e6)
        return dump(traces)

    def test_named_counted_once_and_timed_with_events(self):
        self.check({"PROFINJECT_GPU_TIMING": "events"})

    def test_named_counted_once_and_timed_with_cupti(self):
        text = self.check(cupti_env())
        self.assertEqual({source for _, _, source in gpu_times(text)}, {2})

    def test_per_thread_stream_flavour(self):
        text = dump(record("prog_cuda_nvcc13")[0])
        self.assertEqual(len(re.findall(r"gpu_launch __cudaLaunchKernel .*kernel=\"_Z4ticky\"",
                                        text)), 25)


class AllocatorBackEnds(unittest.TestCase):
    """Device memory as each of PyTorch's allocator back-ends takes it."""

    def test_stream_ordered_frees_each_match_their_allocation(self):
        # the pool hands an address back at once, and another thread frees it
        traces, result = record("prog_cuda_pool")
        self.assertEqual(result.returncode, 0, result.stderr)
        memory = report(traces)["processes"][0]["gpu_memory"]
        self.assertEqual((memory["allocations"], memory["frees"]), (3001, 3001))
        self.assertEqual(memory["peak_bytes"], 9 * MiB)
        self.assertEqual(memory["live_at_end_bytes"], 0)

    def test_pool_reserve_as_the_pool_reports_it(self):
        plain = subprocess.run([os.path.join(PROGRAMS, "prog_cuda_pool")], capture_output=True,
                               text=True, timeout=120)
        traces, result = record("prog_cuda_pool")
        self.assertEqual(result.stdout, plain.stdout, "reading the reserve changes nothing")
        high, end = map(int, re.fullmatch(r"high (\d+) end (\d+)\n", result.stdout).groups())
        self.assertEqual(high, 10 * MiB)
        memory = report(traces)["processes"][0]["gpu_memory"]
        self.assertEqual(memory["pool_reserved_peak_bytes"], high)
        self.assertEqual(memory["pool_reserved_at_end_bytes"], end, "read again after the trim")

    def test_expandable_segments_count_physical_memory_once(self):
        traces, result = record("prog_cuda_vmm")
        self.assertEqual(result.stdout, "ok\n", result.stderr)
        memory = report(traces)["processes"][0]["gpu_memory"]
        self.assertEqual((memory["allocations"], memory["frees"]), (6, 2))
        self.assertEqual(memory["peak_bytes"], 12 * MiB)
        self.assertEqual(memory["live_at_end_bytes"], 10 * MiB)


class Nvtx(unittest.TestCase):
    def test_ranges_through_the_injection_interface(self):
        traces, result = record("prog_nvtx", {"NVTX_INJECTION64_PATH": PRELOAD})
        self.assertEqual(result.stdout, "ok\n")
        ranges = re.findall(r'nvtx_range dur_ns=(\d+) name="(\w+)" depth=(\d+)', dump(traces))
        by_name = {}
        for duration, name, level in ranges:
            by_name.setdefault(name, []).append((int(duration), int(level)))
        self.assertEqual({n: len(v) for n, v in by_name.items()},
                         {"epoch": 1, "step": 3, "forward": 3, "io": 1})
        self.assertEqual({lvl for _, lvl in by_name["step"]}, {1}, "steps nest in the epoch")
        self.assertEqual({lvl for _, lvl in by_name["forward"]}, {2})
        for duration, _ in by_name["forward"]:
            self.assertGreaterEqual(duration, 4e6)
            self.assertLess(duration, 4e6 * 3)  # a sleep may overrun on a loaded machine
        self.assertGreaterEqual(by_name["io"][0][0], 5e6)
        nvtx = entries(report(traces), "nvtx")
        self.assertEqual(nvtx[("step", "")]["count"], 3)

    def test_top_level_ranges_are_steps(self):
        traces, result = record("prog_nvtx", {"NVTX_INJECTION64_PATH": PRELOAD}, "steps")
        self.assertEqual(result.stdout, "ok\n")
        [process] = report(traces)["processes"]
        steps = process["steps"]
        self.assertEqual((steps["found_from"], steps["count"]), ("NVTX", 6))
        self.assertEqual(steps["steady"]["count"] + steps["warmup_steps"]["count"], 6)
        self.assertGreaterEqual(steps["steady"]["p50_ns"], 10e6)
        self.assertLess(steps["steady"]["p50_ns"], 30e6)


class StepsWithGpu(unittest.TestCase):
    def test_gpu_time_of_each_step(self):
        for timing in ({"PROFINJECT_GPU_TIMING": "events"}, cupti_env()):
            traces, result = record("prog_cuda_steps", dict(NVTX_INJECTION64_PATH=PRELOAD, **timing))
            self.assertEqual(result.stdout, "ok\n", result.stderr)
            [process] = report(traces)["processes"]
            steps = process["steps"]
            self.assertEqual((steps["found_from"], steps["count"]), ("NVTX", 8))
            steady = steps["steady"]["count"]
            # two 3 ms kernels in every step, started inside it
            self.assertAlmostEqual(steps["steady"]["gpu_ns"], steady * 6e6, delta=0.05 * steady * 6e6)

    def test_gpu_time_of_each_step_through_the_relay(self):
        """Steps counted by a relay thread an epoch, with no read-back (the Hugging Face
        Trainer's pin-memory loop): the GPU work and the waits for it are the steps' too."""
        for timing in ({"PROFINJECT_GPU_TIMING": "events"}, cupti_env()):
            traces, result = record("prog_cuda_relay", timing)
            self.assertEqual(result.stdout, "ok\n", result.stderr)
            [main] = [p for p in report(traces)["processes"] if p["children"] == 2]
            steps = main["steps"]
            # 24 batches in two epochs: 23 steps between them
            self.assertEqual((steps["found_from"], steps["count"]), ("pin-memory thread", 23))
            steady = steps["steady"]
            # two 2 ms kernels launched after each batch, and as long synchronising
            self.assertAlmostEqual(steady["gpu_ns"], steady["count"] * 4e6,
                                   delta=0.05 * steady["count"] * 4e6)
            self.assertGreater(steady["sync_ns"], 0.8 * steady["count"] * 4e6)


class MemoryGrowth(unittest.TestCase):
    """A loop that keeps 4 MiB a step from step 11 (prog_cuda_leak's own truths),
    after a 64 MiB reserve in step 1 that is no growth."""

    def leak(self, *args, why):
        """Run prog_cuda_leak with @args: its 60 steps and its growth finding."""
        traces, result = record("prog_cuda_leak", None, *args)
        self.assertEqual(result.stdout, "ok\n", result.stderr)
        rep = report(traces)
        [process] = rep["processes"]
        self.assertEqual((process["steps"]["found_from"], process["steps"]["count"]),
                         ("CUDA read-back", 60), why)
        [finding] = [f for f in rep["verdict"] if f["kind"] == "memory-growth"]
        evidence = finding["evidence"]
        self.assertAlmostEqual(evidence["device_growth_bytes_per_step"], 4 * MiB, delta=0.02 * 4 * MiB)
        self.assertEqual(evidence["growth_start_step"], 11)
        # a steady leak ends the job: it comes before any pace verdict
        self.assertEqual(rep["verdict"][0]["kind"], "memory-growth", rep["verdict"])
        self.assertIn("at this rate 1000 more steps take 3.9 GiB more", finding["summary"])
        return traces, process, finding

    def test_leak_per_step_start_and_call_site(self):
        traces, process, finding = self.leak(why="one 4-byte read-back a step")
        evidence = finding["evidence"]
        self.assertIn("4.00 MiB per step from step 11", finding["summary"])
        top = evidence["call_sites"][0]
        self.assertIn("keep_activation", top["stack"]["text"])
        self.assertEqual(top["bytes"], 50 * 4 * MiB, "steps 11 to 60 kept 4 MiB each")
        growth = process["memory"]["growth"]
        self.assertEqual(growth["judged_over"], "steady steps")
        # the HTML's device memory plot marks where growth starts
        page = os.path.join(traces, "report.html")
        subprocess.run([ANALYZE, traces, "--quiet", "--html", page], check=True,
                       capture_output=True)
        with open(page) as f:
            html = f.read()
        self.assertEqual(html.count('class="device-growth"'), 1)
        self.assertIn("grows 4.00 MiB per step from step 11", html)
        # the memory flame graph: under main, the widest frame is the leak's site
        dom, console = browser.load(page)
        self.assertEqual(console, [], "nothing on the browser's console")
        below_main = [frame for frame in browser.flame_frames(dom, "flame-memory")
                      if frame[1] not in ("all", "main", "_start")
                      and not frame[1].startswith("__libc")]
        widest = max(below_main)
        self.assertEqual(widest[1], "keep_activation")
        self.assertEqual(widest[2], 200 * MiB, "steps 11 to 60 kept 4 MiB each: 200 MiB")

    def test_extra_read_backs_of_a_step_are_one_step(self):
        """Hugging Face's Trainer reads the loss's isnan() and isinf() back too."""
        self.leak("isnan-isinf", why="three read-backs a step, 60 steps")


class CaptureWindow(unittest.TestCase):
    """A window opened in a paused process starts with the memory already
    allocated: frees of it inside the window count, and growth is right."""


    def test_window_starts_with_the_live_allocations(self):
        program, sockets, traces = paused_program("prog_cuda_window")
        try:
            self.assertEqual(program.stdout.readline(), "ready\n")
            self.assertIn("recording", control(sockets, program.pid, "start"))
            self.assertEqual(say(program, "go"), "done\n")
            control(sockets, program.pid, "stop")
            say(program, "end")
            self.assertEqual(program.wait(timeout=30), 0)
        finally:
            program.kill()
        [process] = report(traces)["processes"]
        memory = process["gpu_memory"]
        # 8 MiB runtime + 4 MiB driver; the freed 1 MiB and the pinned host MiB are not device memory
        self.assertEqual(memory["live_at_window_start_bytes"], 12 * MiB)
        self.assertEqual(memory["allocations"], 1, "only the 2 MiB was allocated in the window")
        self.assertEqual(memory["allocated_bytes"], 2 * MiB)
        self.assertEqual(memory["frees"], 1, "the free of memory from before the window counts")
        self.assertEqual(memory["peak_bytes"], 14 * MiB)
        self.assertEqual(memory["live_at_end_bytes"], 6 * MiB)
        self.assertEqual(memory["pinned_host_peak_bytes"], 1 * MiB)
        text = dump(traces)
        self.assertEqual(text.count("live_at_window_start"), 3, "8 MiB, 4 MiB and the host MiB")


class MoreEntries(unittest.TestCase):
    """Peer and symbol copies, cooperative launches (runtime and driver), and the
    device count, as PyTorch's wheels import them (tests/cuda/test_cuda_wheels.py)."""

    def check(self, env):
        traces, result = record("prog_cuda_entries", env)
        self.assertEqual(result.stdout, "ok\n", result.stderr)
        rep = report(traces)
        copies = entries(rep, "copy")
        self.assertEqual({k: (v["count"], v["bytes"]) for k, v in copies.items()},
                         {("HtoD", "pageable <64KiB"): (1, 32 << 10),
                          ("HtoD", "pageable 64KiB-1MiB"): (1, 64 << 10),
                          ("DtoD", "- 64KiB-1MiB"): (2, 1 << 20)})
        calls = entries(rep, "cuda")
        self.assertEqual(calls[("cudaMemcpy", "runtime")]["count"], 2, "to a symbol")
        self.assertEqual(calls[("cudaMemcpyAsync", "runtime")]["count"], 2, "between devices")
        self.assertEqual(calls[("cudaLaunchKernel", "runtime")]["count"], 4, "cooperative")
        self.assertEqual(calls[("cuLaunchKernel", "driver")]["count"], 3, "cooperative")
        kernels = entries(rep, "kernel")
        self.assertEqual({k: v["count"] for k, v in kernels.items()},
                         {("coop(unsigned long long)", "launch"): 4,
                          ("grid(unsigned long long)", "launch"): 3})
        gpu = entries(rep, "gpu")
        for name, total in (("coop(unsigned long long)", 8e6), ("grid(unsigned long long)", 3e6)):
            self.assertAlmostEqual(gpu[(name, "kernel")]["total_ns"], total, delta=0.05 * total)
        text = dump(traces)
        self.assertEqual(len(gpu_times(text)), 4 + 3 + 4, "each launch and copy timed")
        self.assertNotIn("gpu_timing source=0", text, "a device was found")
        return text

    def test_timed_with_events(self):
        self.check({"PROFINJECT_GPU_TIMING": "events"})

    def test_timed_with_cupti(self):
        text = self.check(cupti_env())
        self.assertEqual({source for _, _, source in gpu_times(text)}, {2})

    def test_no_driver_said_once_with_the_runtime_found(self):
        traces, result = record("prog_cuda_entries", {"FAKE_CUDA_NO_DRIVER": "1"})
        self.assertEqual((result.returncode, result.stdout), (0, "no device: 35 35\n"), result)
        [(code, reason)] = re.findall(r'gpu_timing source=0 code=(-?\d+) reason="([^"]+)"',
                                      dump(traces))
        self.assertEqual(code, "35")
        self.assertIn("no usable CUDA device or driver (cudaGetDeviceCount: ", reason)
        runtime = re.search(r"; runtime (\S+);", reason).group(1)
        self.assertEqual(runtime, os.path.realpath(
            os.path.join(os.environ["PI_FAKE_CUDA"], "libcudart.so.13")))
        self.assertIn("CUPTI not started", reason)


class WithoutCuda(unittest.TestCase):
    def test_program_without_cuda_is_unaffected(self):
        traces, result = record("prog_status", None, "0", "1000")
        self.assertEqual((result.returncode, result.stdout, result.stderr), (0, "ok\n", ""))
        text = dump(traces)
        self.assertNotIn(" gpu_", text)

    def test_real_runtime_without_driver_runs_and_says_why(self):
        if not os.path.exists(os.path.join(PROGRAMS, "prog_real_cudart")):
            self.skipTest("the CUDA toolkit's libcudart is not installed")
        traces, result = record("prog_real_cudart")
        self.assertEqual(result.returncode, 0, result)
        self.assertEqual(result.stderr, "")
        match = re.search(r'gpu_timing source=0 code=-?\d+ reason="([^"]+)"', dump(traces))
        self.assertIsNotNone(match, "the trace says GPU time is absent")
        self.assertIn("no usable CUDA driver", match.group(1))

    def test_dlsym_rtld_next_keeps_its_meaning(self):
        traces, result = record("prog_dlsym_next")
        self.assertEqual(result.stdout, "2\n", "RTLD_NEXT from a library finds the next library")


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from unittest_summary import main
    main()
