"""Helpers shared by the benchmark's scripts (bench/run.py, workload.py,
peerdata.py, redos/run.py, rewrite/run.py)."""

import os
import shutil
import subprocess
import tempfile


class WriteError(Exception):
    """An output that could not be written: str() names the file."""


def check_writable(path):
    """Raises WriteError now when write_atomic(path, ...) would certainly
    fail (the path is not a regular file, or its directory is missing or
    not writable), so that a tool can say so before its long work rather
    than after it."""
    if os.path.lexists(path) and not os.path.isfile(path):
        raise WriteError("%s: refusing to write: not a regular file" % path)
    d = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(d):
        raise WriteError("%s: cannot write: no such directory: %s" % (path, d))
    if not os.access(d, os.W_OK | os.X_OK):
        raise WriteError("%s: cannot write: the directory is not writable" % path)


def write_atomic(path, text):
    """Writes `text` (UTF-8, LF) to `path` through a temporary file in the
    same directory, renamed into place once complete: readers see the old
    file or the new one, and a failed write leaves neither a part nor the
    temporary behind. Refuses a path that exists and is not a regular file
    (as root, the rename would replace /dev/full or /dev/null). Raises
    WriteError."""
    if os.path.lexists(path) and not os.path.isfile(path):
        raise WriteError("%s: refusing to write: not a regular file" % path)
    d = os.path.dirname(os.path.abspath(path))
    try:
        fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".tmp", dir=d)
    except OSError as e:
        raise WriteError("%s: cannot write: %s" % (path, e.strerror or e))
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(e, OSError):
            raise WriteError("%s: cannot write: %s" % (path, e.strerror or e))
        raise


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


# ------------------------------------------------- peers built with Debian's
# Rust and Go toolchains (bench/run.py, bench/rewrite/run.py)

DEBIAN_CARGO, DEBIAN_RUSTC = "/usr/bin/cargo", "/usr/bin/rustc"
CRATES = "/usr/share/cargo/registry"
DEBIAN_GO = "/usr/bin/go"


class PeerBuildError(Exception):
    """A peer that does not build: str() says which and why."""


def rust_missing():
    """Why a Rust peer (regex 1.7 and aho-corasick 0.7 from Debian's
    crates) cannot be built here, or None."""
    if not (os.access(DEBIAN_CARGO, os.X_OK) and os.access(DEBIAN_RUSTC, os.X_OK)):
        return "Debian's cargo and rustc are not installed (./run.sh bench installs them)"
    names = os.listdir(CRATES) if os.path.isdir(CRATES) else []
    for crate, pkg in (("regex-1.", "librust-regex-dev"), ("aho-corasick-0.7.", "librust-aho-corasick-dev")):
        if not any(n.startswith(crate) for n in names):
            return "%s is not installed (./run.sh bench installs it)" % pkg
    return None


def go_missing():
    """Why the Go peer cannot be built here, or None."""
    if not os.access(DEBIAN_GO, os.X_OK):
        return "Debian's golang-go is not installed (./run.sh bench installs it)"
    return None


def tool_version(cmd):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    return r.stdout.strip() if r.returncode == 0 else "?"


def _copy_sources(src_dir, files, work):
    """Copies `files` (relative paths) of src_dir to work/src: the source
    tree gets no lock file nor build output; copy2 keeps the files' times,
    so the tool rebuilds only what changed."""
    src = os.path.join(work, "src")
    for rel in files:
        os.makedirs(os.path.dirname(os.path.join(src, rel)), exist_ok=True)
        shutil.copy2(os.path.join(src_dir, rel), os.path.join(src, rel))
    return src


def cargo_build(src_dir, files, work, exe_name, what):
    """`cargo build --release --offline` against Debian's registry (the
    crate's .cargo/config.toml points crates.io there) with Debian's rustc,
    from a copy of src_dir's `files` in work/; returns the executable.
    Raises PeerBuildError."""
    src = _copy_sources(src_dir, files, work)
    target = os.path.join(work, "target")
    env = dict(os.environ, RUSTC=DEBIAN_RUSTC, CARGO_TARGET_DIR=target,
               CARGO_HOME=os.path.join(target, "home"))
    r = subprocess.run(["nice", DEBIAN_CARGO, "build", "--release", "--offline", "--quiet"], cwd=src,
                       env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        raise PeerBuildError("%s does not build (cargo build --release --offline in %s):\n%s"
                             % (what, show(src), r.stdout[-3000:]))
    return os.path.join(target, "release", exe_name)


def go_build(src_dir, files, work, exe_name, what):
    """`go build` of a standard-library-only module with Debian's go,
    offline (GOPROXY=off, GOFLAGS=-mod=mod), caches in work/; returns the
    executable. Raises PeerBuildError."""
    src = _copy_sources(src_dir, files, work)
    exe = os.path.join(work, exe_name)
    env = dict(os.environ, GOCACHE=os.path.join(work, "cache"), GOPATH=os.path.join(work, "gopath"),
               GOPROXY="off", GOFLAGS="-mod=mod", GO111MODULE="on", GOTOOLCHAIN="local")
    r = subprocess.run(["nice", DEBIAN_GO, "build", "-o", exe, "."], cwd=src, env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        raise PeerBuildError("%s does not build (go build in %s):\n%s"
                             % (what, show(src), r.stdout[-3000:]))
    return exe
