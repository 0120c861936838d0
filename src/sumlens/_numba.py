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
:meth:`KernelSet.ready` says so. With an empty cache the compiling happens in a child
process at low priority (numba's compiler is Python code holding the GIL for seconds: in a
thread it would stall the training thread's every GIL hand-off); once the child has filled
the cache, a thread loads the kernels from it (a fraction of a second). A stamp file in the
cache, keyed by the versions and the kernels' source, lets later processes skip the child.
"""

from __future__ import annotations

import hashlib
import logging
import os
import platform
import subprocess
import sys
import threading
from importlib import import_module
from pathlib import Path


def default_cache_dir() -> Path:
    """Where compiled kernels are cached unless ``NUMBA_CACHE_DIR`` says otherwise."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "sumlens" / "numba"


os.environ.setdefault("NUMBA_CACHE_DIR", str(default_cache_dir()))

import numba  # noqa: E402
from numba.core.registry import cpu_target  # noqa: E402

if not numba.config.CACHE_DIR:  # numba was imported before us and read its config already
    numba.config.CACHE_DIR = os.environ["NUMBA_CACHE_DIR"]

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
        os.register_at_fork(after_in_child=self._after_fork)

    def ready(self) -> bool:
        """Whether the kernels can be called without compiling; starts getting them ready."""
        if self._ready.is_set():
            return True
        self.start()
        return False

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
        return Path(numba.config.CACHE_DIR) / f"sumlens-{self.name}-{key.hexdigest()[:16]}.ready"

    def _get_ready(self) -> None:
        try:
            prepare()
            stamp = self.stamp()
            if not stamp.exists() and self._compile_in_child():
                try:
                    stamp.parent.mkdir(parents=True, exist_ok=True)
                    stamp.touch()
                except OSError:  # a read-only cache: the next process compiles again
                    pass
            _call(self.warm)  # loads from the cache (compiles here if the child could not)
        except Exception as err:  # the plain paths go on working: say so once
            logging.getLogger("sumlens").warning(
                "the %s kernels could not be compiled (%r); the slower plain path is used",
                self.name,
                err,
            )
        else:
            self._ready.set()
        finally:
            self._done.set()

    def _compile_in_child(self) -> bool:
        """Compile into the cache in a low-priority child process; True if it succeeded."""
        package_root = str(Path(__file__).resolve().parent.parent)
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_root, env.get("PYTHONPATH")]))
        code = (
            "import os\n"
            "try:\n    os.nice(10)\nexcept OSError:\n    pass\n"
            "from sumlens._numba import _call\n"
            f"_call({self.warm!r})\n"
        )
        try:
            done = subprocess.run(
                [sys.executable, "-c", code],
                env=env,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=CHILD_TIMEOUT,
                check=False,
            )
        except (OSError, subprocess.SubprocessError):
            return False
        return done.returncode == 0

    def _after_fork(self) -> None:
        """A forked child has no background thread: it starts its own if it needs one."""
        if not self._ready.is_set():
            self._thread = None
            self._done = threading.Event()
            self._lock = threading.Lock()


def _numpy_version() -> str:
    import numpy

    return numpy.__version__


__all__ = ["CHILD_TIMEOUT", "KernelSet", "numba", "prepare"]
