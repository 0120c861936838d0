"""Importing numba with a writable compile cache, and its registries loaded in time.

numba caches compiled kernels next to the source by default, which fails on read-only
installs; sumlens points ``NUMBA_CACHE_DIR`` at ``~/.cache/sumlens/numba`` (or
``$XDG_CACHE_HOME/sumlens/numba``) unless the user set it. Modules holding kernels
import ``numba`` from here, never directly, so the setting always comes first.

numba also fills its table of built-in functions lazily, at the first compile or cache
load in the process, keyed by the objects it finds in ``math`` at that moment. A
``torch.export`` capture (non-strict) swaps ``math.pow`` for a stand-in while it runs; a
writer thread that loaded its first kernel during such a capture took the stand-in into
that table and could then neither load nor compile the kernel, and the values it was to
write were lost. :func:`prepare` loads the table up front; whatever owns threads that
run kernels calls it before those threads start.

Compiling takes seconds (about 5 s for the writer's kernels, 20 s for the reader's), and a
training step must never wait for it. A :class:`KernelSet` gets a module's kernels ready
in the background, and its callers take their plain numpy/protobuf path until
:meth:`KernelSet.ready` says so. A stamp file in the cache, keyed by the versions and the
kernels' source, says the cache holds them; with the stamp, a thread loads them from the
cache (a fraction of a second), and a read-only cache that holds them serves as well.

Without the stamp, one process per cache compiles at a time: the one that takes the
cache's lock file (``sumlens-compile.lock``, an OS lock the system drops when its holders
end, so it is never stale) compiles in a child process at low priority (numba's compiler
is Python code holding the GIL for seconds: in a thread it would stall the training
thread's every GIL hand-off), and the child writes the stamp once it has filled the cache.
Every other process keeps its plain path and looks again every :data:`POLL_INTERVAL`
seconds; when the stamp appears it loads the kernels, and when the lock is free without a
stamp (its holder died) it takes the lock and compiles in turn. Many processes starting
together (ranks of one job, a sweep, a crashing job restarted over and over) so cost one
compile, not one each. On POSIX the child shares its parent's hold on the lock (one open
file), so the lock lasts exactly as long as either of them; and the child ends when its
parent ends (it watches a pipe from the parent and exits at end of file; on Linux the
kernel also kills it at once, ``PR_SET_PDEATHSIG``, however long the compiler holds the
GIL), so a killed parent leaves no compile behind. A process that ends before the compile
does ends it too, but numba has cached every kernel compiled by then, and the next compile
goes on from there. A process forked from a parent drops its copies of the lock and the pipe. If the
child fails, its parent says so once and compiles in-process, still holding the lock; if
the cache cannot be locked at all, the process says so once and compiles in-process.
"""

from __future__ import annotations

import hashlib
import logging
import os
import platform
import subprocess
import sys
import tempfile
import threading
import time
from importlib import import_module
from pathlib import Path
from typing import IO

from filelock import lock_descriptor


def default_cache_dir() -> Path:
    """Where compiled kernels are cached unless ``NUMBA_CACHE_DIR`` says otherwise."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "sumlens" / "numba"


os.environ.setdefault("NUMBA_CACHE_DIR", str(default_cache_dir()))

import numba  # noqa: E402
from numba.core.registry import cpu_target  # noqa: E402

# numba.config makes its settings at run time, so its types have none of them (the ignores)
if not numba.config.CACHE_DIR:  # type: ignore[attr-defined]
    # numba was imported before us and read its config already
    numba.config.CACHE_DIR = os.environ["NUMBA_CACHE_DIR"]  # type: ignore[attr-defined]

_prepared = False
_prepare_lock = threading.Lock()


def prepare() -> None:
    """Load numba's registries of built-in functions now (once per process; ~0.5 s).

    Costs nothing extra: the first kernel would load them anyway, on whichever thread
    ran it, at whatever moment (see the module docstring).
    """
    global _prepared
    if _prepared:
        return
    with _prepare_lock:
        if not _prepared:
            cpu_target.typing_context.refresh()
            cpu_target.target_context.refresh()
            _prepared = True


CHILD_TIMEOUT = 600.0
"""Seconds a compiling child may take before the kernels are compiled in-process instead."""

POLL_INTERVAL = 0.5
"""Seconds between a waiting process's looks at the stamp and the cache's lock."""

LOCK_NAME = "sumlens-compile.lock"
"""The lock file in the cache directory that one compiling process holds at a time."""

_CHILD_CODE = """\
import os, sys, threading

def orphaned():
    while os.read(0, 512):  # b"" at end of file: the parent has ended
        pass
    os._exit(1)

threading.Thread(target=orphaned, daemon=True).start()
if sys.platform == "linux":  # also at once, however long the compiler holds the GIL
    import ctypes, signal
    try:  # PR_SET_PDEATHSIG: killed when the thread that started us (it waits on us) ends
        ctypes.CDLL(None).prctl(1, signal.SIGKILL)
    except (AttributeError, OSError):
        pass
    if os.getppid() != int(sys.argv[3]):  # the parent ended before that
        os._exit(1)
try:
    os.nice(10)
except (AttributeError, OSError):
    pass
from pathlib import Path
from sumlens._numba import _call
_call(sys.argv[1])
Path(sys.argv[2]).touch()
"""
"""What a compiling child runs (``python -c``), with the warm-up target, the stamp path and
its parent's pid."""

_log = logging.getLogger("sumlens")


def _call(target: str) -> None:
    """Import ``module:function`` and call the function."""
    module, _, function = target.partition(":")
    getattr(import_module(module), function)()


class KernelSet:
    """A group of kernels that get ready in the background (see the module docstring).

    ``warm`` names a function (``"package.module:function"``) that calls every kernel of
    the group once with tiny inputs of each type used, through the same code as real
    calls, so that all their signatures are compiled or loaded. ``sources`` are the
    module names whose code the kernels come from (they key the stamp file).
    """

    def __init__(self, name: str, warm: str, sources: tuple[str, ...]) -> None:
        self.name = name
        self.warm = warm
        self.sources = sources
        self._ready = threading.Event()
        self._done = threading.Event()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._lock_fd: int | None = None  # this process's hold on the cache's lock
        self._child_pipe: IO[bytes] | None = None  # whose end tells the child to stop
        os.register_at_fork(after_in_child=self._after_fork)

    def ready(self) -> bool:
        """Whether the kernels can be called without compiling; starts getting them ready."""
        if self._ready.is_set():
            return True
        self.start()
        return False

    @property
    def started(self) -> bool:
        """Whether getting the kernels ready has begun in this process (:meth:`start`)."""
        return self._thread is not None

    def start(self) -> None:
        """Start getting the kernels ready in the background (once per process)."""
        if self._thread is not None:
            return
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._get_ready, name=f"sumlens-kernels-{self.name}", daemon=True
                )
                self._thread.start()

    def wait(self, timeout: float | None = None) -> bool:
        """Start if needed and wait until the attempt is over; True if the kernels are ready."""
        self.start()
        self._done.wait(timeout)
        return self._ready.is_set()

    def stamp(self) -> Path:
        """The file that says this group's kernels are in the cache, for these versions."""
        key = hashlib.sha256()
        for part in (sys.version, platform.machine(), numba.__version__, _numpy_version()):
            key.update(part.encode())
        for module in self.sources:
            spec = import_module(module).__spec__
            origin = spec.origin if spec is not None else None
            if origin:
                key.update(Path(origin).read_bytes())
        cache_dir = numba.config.CACHE_DIR  # type: ignore[attr-defined]  # set at run time
        return Path(cache_dir) / f"sumlens-{self.name}-{key.hexdigest()[:16]}.ready"

    def _get_ready(self) -> None:
        try:
            prepare()
            stamp = self.stamp()
            if not stamp.exists():
                self._fill_cache(stamp)
            _call(self.warm)  # loads from the cache (compiles here what is not there)
        except Exception as err:  # the plain paths go on working: say so once
            _log.warning(
                "the %s kernels could not be compiled (%r); the slower plain path is used",
                self.name,
                err,
            )
        else:
            self._ready.set()
        finally:
            self._done.set()

    def _fill_cache(self, stamp: Path) -> None:
        """Return once ``stamp`` exists, compiling in turn with the other processes."""
        while not stamp.exists():
            try:
                locked = self._lock_cache(stamp.parent)
            except OSError as err:
                _log.warning(
                    "the kernel cache %s cannot be locked (%r); the %s kernels are compiled "
                    "in this process",
                    stamp.parent,
                    err,
                    self.name,
                )
                return
            if not locked:
                time.sleep(POLL_INTERVAL)
                continue
            try:
                if not stamp.exists() and not self._compile_in_child(stamp):
                    _call(self.warm)  # still holding the lock: the others keep waiting
                    stamp.touch()
            finally:
                self._unlock_cache()

    def _lock_cache(self, cache: Path) -> bool:
        """Take the cache's lock without waiting; False if another process holds it."""
        cache.mkdir(parents=True, exist_ok=True)
        self._lock_fd = os.open(cache / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o666)
        try:
            locked = lock_descriptor(self._lock_fd, blocking=False)
        except BaseException:
            self._unlock_cache()
            raise
        if not locked:
            self._unlock_cache()
        return locked

    def _unlock_cache(self) -> None:
        """Close this process's hold on the lock; a child sharing it keeps it until it ends."""
        fd, self._lock_fd = self._lock_fd, None
        if fd is not None:
            os.close(fd)

    def _compile_in_child(self, stamp: Path) -> bool:
        """Fill the cache in a low-priority child that writes ``stamp``; True if it did."""
        package_root = str(Path(__file__).resolve().parent.parent)
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_root, env.get("PYTHONPATH")]))
        # On POSIX the child shares this process's hold on the lock (one open file).
        shared = (self._lock_fd,) if os.name == "posix" and self._lock_fd is not None else ()
        with tempfile.TemporaryFile() as errors:
            try:
                child = subprocess.Popen(
                    [sys.executable, "-c", _CHILD_CODE, self.warm, str(stamp), str(os.getpid())],
                    env=env,
                    stdin=subprocess.PIPE,
                    stdout=subprocess.DEVNULL,
                    stderr=errors,
                    pass_fds=shared,
                )
            except OSError as err:
                failure: str | None = repr(err)
            else:
                failure = self._wait_for(child)
            if failure is None:
                return True
            errors.seek(0)
            said = errors.read().decode(errors="replace").strip().splitlines()
        _log.warning(
            "compiling the %s kernels in a child process failed (%s%s); they are compiled "
            "in this process",
            self.name,
            failure,
            f": {said[-1]}" if said else "",
        )
        return False

    def _wait_for(self, child: subprocess.Popen[bytes]) -> str | None:
        """Wait for the compiling child; None if it succeeded, else how it failed."""
        self._child_pipe = child.stdin
        try:
            code = child.wait(CHILD_TIMEOUT)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
            return f"still compiling after {CHILD_TIMEOUT:.0f} s"
        finally:
            self._child_pipe = None
            if child.stdin is not None:
                child.stdin.close()
        return None if code == 0 else f"exit status {code}"

    def _after_fork(self) -> None:
        """A forked child has no background thread and holds no lock or child of its parent."""
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None
        if self._child_pipe is not None:
            self._child_pipe.close()
            self._child_pipe = None
        if not self._ready.is_set():
            self._thread = None
            self._done = threading.Event()
            self._lock = threading.Lock()


def _numpy_version() -> str:
    import numpy

    return numpy.__version__


__all__ = ["CHILD_TIMEOUT", "LOCK_NAME", "POLL_INTERVAL", "KernelSet", "numba", "prepare"]
