#!/usr/bin/env python3
"""Python frames on call sites. Python programs whose CUDA calls (through
ctypes, against the test double) and waits sit on lines marked in their
source ("# site: NAME") run under the preload; the report must put each
call on its line, in its function, with its callers, for every Python
found here (the project's Python always, the one that runs this test;
python3.8 to 3.13 where installed).
The lines are read from the programs' source, not from the profiler.

Run by ctest with the build's paths in the environment."""
import csv
import glob
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import browser  # noqa: E402

ANALYZE = os.environ["PI_ANALYZE"]
PRELOAD = os.environ["PI_PRELOAD"]
PROGRAMS = os.environ["PI_PROGRAMS"]
CUDART = os.path.join(os.environ["PI_FAKE_CUDA"], "libcudart.so.13")
NATIVE_THREAD = os.environ["PI_NATIVE_THREAD"]
FAKE_CUPTI = os.environ["PI_FAKE_CUPTI"]
SOURCE = os.environ["PI_SOURCE"]
CALL_SITES = os.path.join(SOURCE, "tests", "cuda_programs", "py_call_sites.py")
DATALOADER = os.path.join(SOURCE, "tests", "programs", "py_dataloader.py")
MiB = 1 << 20


def marked_lines(path):
    """{name: line number} of the "# site: NAME" comments of a program"""
    with open(path) as f:
        return {m.group(1).strip(): number for number, line in enumerate(f, 1)
                for m in [re.search(r"# site: (.+)$", line)] if m}


def pythons():
    """the project's Python (this one), then one interpreter per other version found (3.8 to 3.13)"""
    found = {sys.executable: None}
    roots = [os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv"))]
    candidates = [os.path.join("/usr/bin", f"python3.{minor}") for minor in range(8, 14)]  # Debian's
    for root in roots:
        candidates += sorted(glob.glob(os.path.join(root, "versions", "3.*", "bin", "python3")))
    for path in candidates:
        if os.access(path, os.X_OK):
            found.setdefault(os.path.realpath(path), None)
    versions = {}
    for path in found:
        version = subprocess.run([path, "-c", "import sys; print(sys.version_info[1])"],
                                 capture_output=True, text=True).stdout.strip()
        if version.isdigit() and 8 <= int(version) <= 13:
            versions.setdefault(int(version), path)
    versions[sys.version_info[1]] = sys.executable
    return sorted(versions.items())


def flame_of(traces, graph):
    """{frame label: figure (seconds, bytes)} of flame graph @graph (its svg id) of the HTML
    report of @traces, as a browser draws it; nothing may appear on its console"""
    page = os.path.join(traces, "report.html")
    subprocess.run([ANALYZE, traces, "--quiet", "--html", page], check=True, capture_output=True)
    dom, console = browser.load(page)
    assert console == [], ("something on the browser's console", console)
    frames = {}
    for _, label, figure in browser.flame_frames(dom, graph):
        frames[label] = frames.get(label, 0) + figure
    return frames


def run_profiled(python, program, *args, env=None):
    """@program run by @python under the profiler: what it printed, the JSON report of its
    traces, and the traces' folder."""
    traces = tempfile.mkdtemp()
    environment = dict(os.environ, LD_PRELOAD=PRELOAD, PROFINJECT_OUTPUT=traces, **(env or {}))
    result = subprocess.run([python, program, *args], env=environment, capture_output=True,
                            text=True, timeout=180)
    assert result.returncode == 0, (python, program, args, result)
    out = os.path.join(tempfile.mkdtemp(), "r.json")
    subprocess.run([ANALYZE, traces, "--quiet", "--json", out], check=True, capture_output=True)
    with open(out) as f:
        return result.stdout, json.load(f), traces


def record(python, program, *args, env=None):
    """The JSON report of @program, which says "ok" when it did what it was asked."""
    printed, report, _ = run_profiled(python, program, *args, env=env)
    assert printed == "ok\n", (python, args, printed)
    return report


def frames(stack):
    return [(f["file"], f["line"], f["function"]) for f in stack["python"]]


def by_bytes(report):
    [process] = [p for p in report["processes"] if "gpu_memory" in p]
    return {site["bytes"] // MiB: site["stack"] for site in process["gpu_memory"]["never_freed"]}


class PythonFrames(unittest.TestCase):
    """Every mode of py_call_sites.py, under each Python."""

    line = marked_lines(CALL_SITES)

    def at(self, name, function):
        return (CALL_SITES, self.line[name], function)

    def each_python(self, mode, check, env=None):
        for minor, python in pythons():
            with self.subTest(python=f"3.{minor}"):
                check(minor, record(python, CALL_SITES, CUDART, NATIVE_THREAD, mode, env=env))

    def test_allocations_on_their_lines_with_or_without_the_gil(self):
        self.each_python("alloc", self.check_allocations)

    def check_allocations(self, minor, report):
        sites = by_bytes(report)
        self.assertEqual(set(sites), {1, 2})
        # ctypes.PyDLL keeps the GIL: frames read in the call
        self.assertEqual(frames(sites[2])[:2], [self.at("held", "allocate_held"),
                                                self.at("held caller", "alloc_mode")])
        self.assertEqual(frames(sites[2])[-1][2], "<module>")
        self.assertEqual(sites[2]["headline"], f"{CALL_SITES}:{self.line['held']} in allocate_held")
        self.assertTrue(sites[2]["native"], "native frames below the Python ones")
        [python] = report["python"]
        if minor == 8:
            # 3.8: only calls made holding the GIL
            self.assertEqual(python["frames"], "held")
            self.assertEqual(frames(sites[1]), [])
            return
        self.assertEqual(python["frames"], "held_and_deferred")
        # ctypes.CDLL releases the GIL: frames read at the main thread's next safe point
        self.assertEqual(frames(sites[1])[:2], [self.at("released", "allocate_released"),
                                                self.at("released caller", "alloc_mode")])
        self.assertEqual(frames(sites[1])[-1][2], "<module>")

    def test_worker_thread_frames_and_threads_without_the_gil(self):
        self.each_python("threads", self.check_threads)

    def check_threads(self, minor, report):
        sites = by_bytes(report)
        self.assertEqual(set(sites), {3, 4, 5})
        worker = frames(sites[3])
        self.assertEqual(worker[0], self.at("worker held", "worker"))
        self.assertNotIn("threads_mode", [f for _, _, f in worker],
                         "the worker's own frames, not the main thread's")
        # a Python thread without the GIL, and a thread Python never saw:
        # no Python frames (neither theirs nor another thread's), native ones only
        self.assertEqual(frames(sites[4]), [])
        self.assertTrue(sites[4]["native"])
        self.assertEqual(frames(sites[5]), [])
        # named from the library's symbol table: a static function, unknown to dladdr
        first = sites[5]["native"][0]
        self.assertEqual((first["symbol"], os.path.basename(first["module"])),
                         ("allocate", "libnative_thread.so"))

    def test_sampled_launches_counted_by_line(self):
        self.each_python("launch", self.check_launches, env={"PROFINJECT_PY_SAMPLE": "1"})

    def check_launches(self, minor, report):
        kernel = "step(float*)"
        launches = [e for e in report["latency"] if e["group"] == "kernel"]
        self.assertEqual([(e["name"], e["count"]) for e in launches], [(kernel, 65)])
        counts = {frames(s["stack"])[0]: s["samples"] for s in report["launch_sites"]
                  if s["kernel"] == kernel}
        expected = {self.at("launch held", "launch_held"): 25}
        if minor != 8:
            expected[self.at("launch released", "launch_released")] = 40
        self.assertEqual(counts, expected)

    def test_no_launch_sampled_when_sampling_is_off(self):
        minor, python = pythons()[-1]
        report = record(python, CALL_SITES, CUDART, NATIVE_THREAD, "launch",
                        env={"PROFINJECT_PY_SAMPLE": "0"})
        self.assertEqual(report["launch_sites"], [])

    def test_python_frames_turned_off(self):
        report = record(sys.executable, CALL_SITES, CUDART, NATIVE_THREAD, "alloc",
                        env={"PROFINJECT_PY_FRAMES": "0"})
        [python] = report["python"]
        self.assertEqual((python["frames"], python["reason"]), ("off", "PROFINJECT_PY_FRAMES=0"))
        # without Python frames the two allocations may share one native call
        # site (both through ctypes' ffi_call): their 1 + 2 MiB, none with frames
        sites = by_bytes(report)
        self.assertEqual(sum(sites), 3)
        self.assertEqual([frames(stack) for stack in sites.values()], [[]] * len(sites))
        self.assertTrue(all(stack["native"] for stack in sites.values()), "native frames still")

    def test_waits_of_the_main_thread_on_their_lines(self):
        self.each_python("wait", self.check_waits)

    def check_waits(self, minor, report):
        if minor == 8:
            self.assertEqual(report["wait_sites"], [], "the main thread waits without the GIL")
            return
        data = [w for w in report["wait_sites"] if w["class"] == "data_wait"]
        reads = [w for w in data if self.at("pipe read", "read_batch") in frames(w["stack"])]
        self.assertEqual(sum(w["count"] for w in reads), 3, "three reads of the pipe")
        locks = [w for w in report["wait_sites"] if w["class"] == "lock_wait" and
                 self.at("queue get", "wait_mode") in frames(w["stack"])]
        self.assertEqual(len(locks), 1)
        # queue.py and threading.py are the standard library: the headline is the caller's line
        self.assertEqual(locks[0]["stack"]["headline"],
                         f"{CALL_SITES}:{self.line['queue get']} in wait_mode")


PY_NODE = "PyNode (custom Python autograd Function)"


class GpuTimeByModule(unittest.TestCase):
    """Each kernel's GPU time credited to the forward calls above its sampled launches, and
    the backward pass's to the autograd node its native frames were applying: the module table
    against the model's own count of what it launched under each module path and each node
    (py_call_sites.py modules: kernels of known durations on the fake GPU; the nodes are
    functions of lib_native_thread.c named by the nodes' C++ symbols). The GPU times come from
    the fake CUPTI, which gives each kernel the fake GPU's own start and end: event pairs on the
    fake GPU add the host's time between the pair's first event and the launch to an idle
    stream's kernel (about 1.6 us a launch under AddressSanitizer on a busy machine, 0.8% of
    this model's Embedding), which is no matter of where the time is credited."""

    def modules(self, sample):
        """the model's GPU time by module path, by autograd node (the report's names), the
        report's table, and its module rows by path; the traces and the model's GPU time by
        path and kernel in self.traces, self.by_kernel"""
        printed, report, self.traces = run_profiled(
            sys.executable, CALL_SITES, CUDART, NATIVE_THREAD, "modules",
            env={"PROFINJECT_PY_SAMPLE": str(sample), "LD_LIBRARY_PATH": FAKE_CUPTI})
        self.assertEqual(report["gpu"]["timing"], "cupti", report["gpu"])
        truth = json.loads(printed)
        self.by_kernel = truth.pop("(by kernel)")
        self.by_kernel[f"backward/{PY_NODE}"] = self.by_kernel.pop("backward/PyNode")
        nodes = {PY_NODE if node == "PyNode" else node: ns
                 for node, ns in truth.pop("(backward)").items()}
        table = report["gpu_modules"]
        return truth, nodes, table, {r["path"]: r for r in table["modules"]}

    @staticmethod
    def total(truth, nodes):
        """all GPU time: the outermost paths' (those outside any module included), the native
        thread's launches under no node, and the backward nodes'"""
        return sum(ns for path, ns in truth.items() if "/" not in path) + sum(nodes.values())

    # the GPU time the fake GPU's records give a kernel is its duration within a few hundred ns
    # (their clock against ours): totals within 0.5%, shares within 0.1 points
    def test_every_launch_sampled_gives_each_module_its_time(self):
        truth, nodes, table, rows = self.modules(1)
        total = self.total(truth, nodes)
        native = truth.pop("(native thread)")
        self.assertAlmostEqual(table["gpu_ns"], total, delta=0.005 * total)
        self.assertEqual(set(rows), set(truth) - {""})
        # the gemm and gelu kernels a thread without Python frames launched under no autograd
        # node are in no module and no node
        self.assertAlmostEqual(table["unplaced_ns"], native, delta=0.005 * native)
        # the backward row holds what the nodes launched, each node its own kernels' time
        backward = sum(nodes.values())
        self.assertAlmostEqual(table["backward_ns"], backward, delta=0.005 * backward)
        self.assertAlmostEqual(table["backward_share"], backward / total, delta=0.001)
        self.assertEqual(table["backward_error_points"], 0)
        found = {n["node"]: n for n in table["backward_nodes"]}
        self.assertEqual(set(found), set(nodes))
        for node, ns in nodes.items():
            self.assertAlmostEqual(found[node]["gpu_ns"], ns, delta=0.005 * ns, msg=node)
            self.assertAlmostEqual(found[node]["share"], ns / total, delta=0.001, msg=node)
            self.assertEqual(found[node]["error_points"], 0, node)
        # 40 passes, 6 launches each
        self.assertAlmostEqual(found["MmBackward0"]["launches"], 240, delta=1e-6)
        self.assertEqual([n["node"] for n in table["backward_nodes"]],
                         sorted(nodes, key=lambda n: -nodes[n]), "nodes by GPU time")
        for path, ns in truth.items():
            if path:
                self.assertAlmostEqual(rows[path]["gpu_ns"], ns, delta=0.005 * ns, msg=path)
                self.assertAlmostEqual(rows[path]["share"], ns / total, delta=0.001, msg=path)
                self.assertEqual(rows[path]["error_points"], 0, path)
        self.assertAlmostEqual(table["outside_ns"], truth[""], delta=0.005 * truth[""])
        # 40 steps: two Linear calls in each of two Blocks' Attention
        self.assertAlmostEqual(rows["Model/Block/Attention/Linear"]["launches"], 160, delta=1e-6)
        self.assertEqual(rows["Model/Block"]["depth"], 1)
        self.assertEqual(rows["SGD.step (optimizer)"]["depth"], 0)
        # each path after its parent, the heavier sibling first
        order = [r["path"] for r in table["modules"]]
        self.assertLess(order.index("Model/Block/MLP"), order.index("Model/Block/MLP/Linear"))
        self.assertLess(order.index("Model/Block/Attention"), order.index("Model/Block/MLP"))

    def test_the_gpu_flame_graph_and_lines_give_each_place_its_time(self):
        """The HTML page's GPU-time flame graph (in a browser) and the JSON's lines, every launch
        sampled: each forward's frame holds its module's time, backward and each node theirs;
        the one line that launches from Python (Kernels.launch) all of Python's"""
        truth, nodes, table, _ = self.modules(1)
        frames = {label: s * 1e9 for label, s in flame_of(self.traces, "flame-gpu").items()}
        name = os.path.basename(CALL_SITES)
        # the page prints 3 significant figures: 0.5% and the rounding
        expected = {f"{cls}.forward ({name})": truth[path] for cls, path in
                    (("Model", "Model"), ("Attention", "Model/Block/Attention"),
                     ("MLP", "Model/Block/MLP"), ("Embedding", "Model/Embedding"))}
        expected.update(nodes, backward=sum(nodes.values()))
        expected["SGD.step (sgd.py)"] = truth["SGD.step (optimizer)"]
        # what no Python frame and no node places: the native thread's launches under no node
        expected["(not placed)"] = truth["(native thread)"]
        for label, ns in expected.items():
            self.assertAlmostEqual(frames.get(label, 0), ns, delta=0.006 * ns, msg=(label, frames))
        lines = {line["headline"]: line["gpu_ns"] for line in table["lines"]}
        python = sum(ns for path, ns in truth.items() if "/" not in path and path != "(native thread)")
        [launch] = [ns for line, ns in lines.items() if line.endswith(" in Kernels.launch")]
        self.assertAlmostEqual(launch, python, delta=0.005 * python)
        for node, ns in nodes.items():
            self.assertAlmostEqual(lines[f"backward: {node}"], ns, delta=0.005 * ns, msg=node)

    def test_the_export_gives_each_module_its_kernels(self):
        """kernels_by_module.csv (--export), read back with Python's csv: each module path's
        and each autograd node's GPU time by kernel, every launch sampled, against the
        program's own count of what it launched under each"""
        truth, nodes, _, _ = self.modules(1)
        by_kernel, total = self.by_kernel, self.total(truth, nodes)
        tables = tempfile.mkdtemp()
        subprocess.run([ANALYZE, self.traces, "--quiet", "--export", tables], check=True,
                       capture_output=True)
        with open(os.path.join(tables, "kernels_by_module.csv"), newline="") as f:
            rows = list(csv.DictReader(f))
        found = {}
        for row in rows:
            found.setdefault(row["module_path"], {})[row["kernel"]] = row
            self.assertEqual(int(row["depth"]), row["module_path"].count("/"), row)
            self.assertEqual(row["kernel_full"], row["kernel"] + "(float*)")  # gemm(float*)
        self.assertEqual(set(found), set(by_kernel))
        for path, kernels in by_kernel.items():
            self.assertEqual(set(found[path]), set(kernels), path)
            for kernel, ns in kernels.items():
                row = found[path][kernel]
                self.assertAlmostEqual(float(row["gpu_ns"]), ns, delta=0.005 * ns, msg=(path, kernel))
                self.assertAlmostEqual(float(row["share"]), ns / total, delta=0.001, msg=(path, kernel))
        # 40 steps of 6 MmBackward0 gemm launches
        self.assertAlmostEqual(float(found["backward/MmBackward0"]["gemm"]["launches"]), 240, delta=0.05)

    def test_one_launch_in_seven_sampled_within_the_stated_error(self):
        """Each launch is sampled on its own, so the stated error is a 95% interval: over 20
        runs, each path's error in units of its stated error's z (1.96 at the interval's
        edge) has a root mean square near 1, between 0.5 and 1.5 (over 100 errors, either
        happens at random far less than once in 10,000 runs), and at most a quarter
        of the errors are outside their interval (5% expected; the paths' errors are
        correlated, as they share kernels). A single error is not bounded: at a few dozen
        samples a kernel, one in a few hundred lies beyond z 3.5."""
        z, backward_z = [], []
        for _ in range(20):
            truth, nodes, table, rows = self.modules(7)
            total = self.total(truth, nodes)
            truth.pop("(native thread)")
            self.assertAlmostEqual(table["gpu_ns"], total, delta=0.005 * total)
            for path, ns in truth.items():
                # Model holds every launch of its kernels by the Python thread: no error
                if path in ("", "Model") or ns / total < 0.05:
                    continue
                error = abs(rows[path]["share"] - ns / total) * 100
                z.append(1.96 * error / rows[path]["error_points"])
            # the backward row and its nodes of 5% or more (MmBackward0, AddmmBackward0, which
            # share the gemm kernel with each other and with launches under no node)
            found = {n["node"]: n for n in table["backward_nodes"]}
            estimates = [(table["backward_share"], sum(nodes.values()), table["backward_error_points"])]
            estimates += [(found[node]["share"], ns, found[node]["error_points"])
                          for node, ns in nodes.items() if ns / total >= 0.05]
            for estimated, ns, stated in estimates:
                backward_z.append(1.96 * abs(estimated - ns / total) * 100 / stated)
        for errors, name, count in ((z, "module paths", 100), (backward_z, "backward", 60)):
            rms = (sum(v * v for v in errors) / len(errors)) ** 0.5
            outside = sum(v > 1.96 for v in errors) / len(errors)
            shown = (f"{name}, over {len(errors)} errors: RMS z {rms:.2f}, {outside:.0%} outside; "
                     f"largest {max(errors):.2f}")
            self.assertEqual(len(errors), count)
            self.assertTrue(0.5 < rms < 1.5, shown)
            self.assertLessEqual(outside, 0.25, shown)
            print(f"one launch in seven: {shown}")


class RealDataLoader(unittest.TestCase):
    def test_the_loop_waits_on_its_for_line(self):
        report = record(sys.executable, DATALOADER)
        line = marked_lines(DATALOADER)["loader"]
        data = sorted((w for w in report["wait_sites"] if w["class"] == "data_wait"),
                      key=lambda w: -w["total_ns"])
        self.assertTrue(data, "data waits with Python frames")
        # PyTorch's and multiprocessing's frames are installed code: the headline is the loop's line
        self.assertEqual(data[0]["stack"]["headline"], f"{DATALOADER}:{line} in train")
        self.assertIn((DATALOADER, line, "train"), frames(data[0]["stack"]))
        self.assertTrue(any("torch/utils/data/dataloader.py" in f for f, _, _ in frames(data[0]["stack"])))


class PythonTime(unittest.TestCase):
    """Time samples by function against the program's own clock, under each Python."""

    def test_each_function_gets_the_time_it_took(self):
        program = os.path.join(SOURCE, "tests", "programs", "py_time_split.py")
        for minor, python in pythons():
            if minor < 9:
                continue  # pending calls from another thread: 3.9 and newer
            with self.subTest(python=f"3.{minor}"):
                printed, report, _ = run_profiled(python, program)
                spent = json.loads(printed)
                [profile] = report["python_time"]
                ours = {f["function"]: f["inclusive_ns"] / 1e9 for f in profile["functions"]
                        if f["file"] == program}
                for function, seconds in spent.items():
                    # a sample's span goes to the stack at its end: one interval (10 ms)
                    # at each end of a function can fall on the wrong side
                    self.assertAlmostEqual(ours.get(function, 0), seconds,
                                           delta=0.025 + 0.05 * seconds, msg=(function, ours))


    def test_the_flame_graph_gives_each_function_its_time(self):
        program = os.path.join(SOURCE, "tests", "programs", "py_time_split.py")
        printed, _, traces = run_profiled(sys.executable, program)
        spent = json.loads(printed)
        page = os.path.join(traces, "report.html")
        frames = flame_of(traces, "flame-time")
        name = os.path.basename(program)
        for function, seconds in spent.items():
            # the same tolerance as the table by function: one interval at each end
            self.assertAlmostEqual(frames.get(f"{function} ({name})", 0), seconds,
                                   delta=0.025 + 0.05 * seconds, msg=(function, frames))
        # clicked, the slowest function fills the graph's width (1000 units, 1 of margin)
        x, width = browser.click_frame(page, "flame-time", f"hasher ({name})")
        self.assertEqual((x, width), (0.0, 999.0))

    def test_a_loop_that_never_gives_the_gil_up_is_sampled(self):
        # pure Python from the first line to the last: no call releases the GIL,
        # so only a sample the sampling thread itself makes due can reach it
        code = ("import time\ndef spin():\n    end = time.perf_counter() + 0.5\n"
                "    while time.perf_counter() < end:\n        pass\nspin()\n")
        for minor, python in pythons():
            if minor < 9:
                continue
            with self.subTest(python=f"3.{minor}"):
                [profile] = run_profiled(python, "-c", code)[1]["python_time"]
                [spin] = [f for f in profile["functions"] if f["function"] == "spin"]
                self.assertAlmostEqual(spin["inclusive_ns"] / 1e9, 0.5, delta=0.05)


class ThreadNames(unittest.TestCase):
    def test_threads_have_the_names_python_gave_them(self):
        program = os.path.join(SOURCE, "tests", "programs", "py_thread_names.py")
        for minor, python in pythons():
            if minor < 9:
                continue  # pending calls from another thread: 3.9 and newer
            with self.subTest(python=f"3.{minor}"):
                printed, report, _ = run_profiled(python, program)
                named = json.loads(printed)
                [process] = report["processes"]
                ours = {t["tid"]: t["name"] for t in process["threads"]}
                for name, tid in named.items():
                    self.assertEqual(ours.get(tid), name, ours)


class UnknownPython(unittest.TestCase):
    def test_an_unknown_layout_is_said_once_and_nothing_is_read(self):
        roots = [os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv"))]
        old = sorted(glob.glob(os.path.join(roots[0], "versions", "3.7.*", "bin", "python3")))
        if not old:
            self.skipTest("no Python 3.7 here (pyenv)")
        traces = tempfile.mkdtemp()
        code = "import os, time\nif os.fork() == 0:\n    time.sleep(0.05)\n    os._exit(0)\n" \
               "os.wait()\nprint('ok')"
        result = subprocess.run([old[0], "-c", code], capture_output=True, text=True, timeout=60,
                                env=dict(os.environ, LD_PRELOAD=PRELOAD, PROFINJECT_OUTPUT=traces))
        self.assertEqual((result.returncode, result.stdout), (0, "ok\n"))
        # one line for the process and its fork child together
        self.assertEqual(result.stderr, "profinject: Python 3.7: no Python frames or time samples: "
                                        "only Python 3.8 to 3.13 are known\n")
        out = os.path.join(traces, "r.json")
        subprocess.run([ANALYZE, traces, "--quiet", "--json", out], check=True, capture_output=True)
        with open(out) as f:
            report = json.load(f)
        self.assertEqual({(p["version"][:3], p["frames"]) for p in report["python"]}, {("3.7", "off")})
        self.assertEqual(report["python_time"], [])


class WithoutPython(unittest.TestCase):
    def test_c_program_records_no_python_and_names_static_functions(self):
        traces = tempfile.mkdtemp()
        environment = dict(os.environ, LD_PRELOAD=PRELOAD, PROFINJECT_OUTPUT=traces)
        result = subprocess.run([os.path.join(PROGRAMS, "prog_cuda_runtime")], env=environment,
                                capture_output=True, text=True, timeout=120)
        self.assertEqual((result.returncode, result.stdout, result.stderr), (0, "ok\n", ""))
        out = os.path.join(tempfile.mkdtemp(), "r.json")
        subprocess.run([ANALYZE, traces, "--quiet", "--json", out], check=True, capture_output=True)
        with open(out) as f:
            report = json.load(f)
        self.assertEqual((report["python"], report["launch_sites"], report["wait_sites"]), ([], [], []))
        [leak] = report["processes"][0]["gpu_memory"]["never_freed"]
        self.assertEqual(leak["stack"]["python"], [])
        first = leak["stack"]["native"][0]
        self.assertEqual((first["symbol"], os.path.basename(first["module"])),
                         ("main", "prog_cuda_runtime"))
        self.assertEqual(leak["stack"]["headline"], leak["stack"]["text"].split(";")[0])


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from unittest_summary import main
    main()
