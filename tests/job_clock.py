"""A figure of ours against the job's own clock, for the suites that time calls both ways
(test_spans, test_requests): within 1% or 50 us, where the job's thread kept its CPU."""
import statistics
import unittest


def agrees(ns, seconds):
    """a duration of ours (ns) and the job's (s): within 1% or 50 us"""
    return abs(int(ns) / 1e9 - seconds) <= max(0.01 * seconds, 50e-6)


def assert_agree(test, pairs):
    """Each (ours in ns, the job's in s) within 1% or 50 us, but for one in 20 at most, and at
    least one, whose job's clock is the longer: a virtual CPU the host takes away for a while
    is seen by neither the guest's context switches nor the test (both clocks then hold the
    gap at different moments), and only ever lengthens what the job measured around the
    call. A dozen calls may meet one such pause as well as a hundred."""
    off = [(o, d) for o, d in pairs if not agrees(o, d)]
    test.assertLessEqual(len(off), max(1, len(pairs) // 20), off)
    test.assertTrue(all(int(o) <= d * 1e9 for o, d in off), off)


def unpreempted(pairs, preempted):
    """the pairs whose call kept its thread's CPU (no involuntary context switch): where
    another process took it, both clocks hold the wait but not at the same moments. Too few
    left to judge (a machine loaded beside the test) is a skip, said."""
    kept = [pair for pair, waited in zip(pairs, preempted) if not waited]
    if len(kept) < len(pairs) // 2:
        raise unittest.SkipTest("%d of %d calls preempted: the machine is too loaded to compare "
                                "clocks within 50 us" % (len(pairs) - len(kept), len(pairs)))
    return kept


def assert_ends_agree(test, ours_ns, theirs_s, within_ns=50e3):
    """Moments of ours (ns, on our clock) and the job's (perf_counter, s), one each per
    event: each within 50 us (@within_ns) once the two clocks' offset (their median
    difference) is taken away, but for one in 20 at most, and at least one: a virtual CPU the host takes
    away between the two readings of one moment moves that one alone, and compared as
    durations it would put two of them apart."""
    test.assertEqual(len(ours_ns), len(theirs_s))
    gaps = sorted(int(o) - t * 1e9 for o, t in zip(ours_ns, theirs_s))
    offset = gaps[(len(gaps) - 1) // 2]
    off = [(o, t) for o, t in zip(ours_ns, theirs_s)
           if abs(int(o) - t * 1e9 - offset) > within_ns]
    test.assertLessEqual(len(off), max(1, len(ours_ns) // 20), off)


def few_preempted(preempted):
    """a figure over every call (a median) is compared where at most a tenth of them were
    preempted; else a skip, said"""
    if sum(preempted) > len(preempted) // 10:
        raise unittest.SkipTest("%d of %d calls preempted: the machine is too loaded to "
                                "compare clocks within 50 us" % (sum(preempted), len(preempted)))


def assert_median_agrees(test, ours_ns, theirs_s):
    """The median of ours (ns) against the median of the job's values (s), within 1% or 50 us
    of where that median can lie when one in 20 of the values, and at least one, is
    displaced by a pause either way (the rule assert_agree keeps call by call): with a
    dozen values two neighbours in the middle may stand 50 us apart."""
    values = sorted(theirs_s)
    k = max(1, len(values) // 20)
    lowest = statistics.median([float("-inf")] * k + values[:len(values) - k])
    highest = statistics.median(values[k:] + [float("inf")] * k)
    ours = int(ours_ns) / 1e9
    test.assertTrue(lowest - max(0.01 * lowest, 50e-6) <= ours
                    <= highest + max(0.01 * highest, 50e-6),
                    (ours, statistics.median(values), lowest, highest))
