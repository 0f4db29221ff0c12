"""Helpers shared by bench/run.py and bench/redos/run.py."""

import os
import shutil


def show(path):
    """A path relative to the current directory when it is inside it."""
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel


def pick_cpu():
    """The CPU to pin the benchmark to with taskset (1, else 0), or None,
    and a line saying what was done."""
    if not shutil.which("taskset"):
        return None, "taskset not found: not pinned"
    try:
        allowed = os.sched_getaffinity(0)
    except (AttributeError, OSError):
        allowed = set()
    for cpu in (1, 0):
        if cpu in allowed:
            return cpu, "pinned with taskset -c %d" % cpu
    return None, "CPUs 0 and 1 unavailable: not pinned"
