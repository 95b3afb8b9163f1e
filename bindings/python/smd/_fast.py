"""The compiled fast path of the commonest blocking calls (a blocking
in-place allreduce of a numpy array, a barrier): ``smd._fastcall``, built
from bindings/python/fastcall where the package is built with a C compiler
and Python's headers. It calls libsmd's functions straight from CPython's
call protocol; through cffi's ABI mode the same call costs several times
more (docs/PERFORMANCE.md, "Python per-call cost").

Looked for, first found wins: ``$SMD_PY_FASTCALL`` (a path; ``0`` turns
the fast path off), inside the package (installed), or the source tree's
build directory. :func:`get` gives None without one: comm.py then calls
through cffi (or ctypes), with the same results and errors.
"""
from __future__ import annotations

import ctypes
import importlib.machinery
import importlib.util
import os
import signal
from pathlib import Path
from typing import Any, List, Optional

from . import _interrupt
from ._ffi import SOURCE_ROOT, _in_source_tree, lib

_NAME = "smd._fastcall"
_UNSET = object()
_module: Any = _UNSET


def _candidates() -> List[Path]:
    explicit = os.environ.get("SMD_PY_FASTCALL")
    if explicit is not None:
        return [] if explicit in ("", "0") else [Path(explicit)]
    here = Path(__file__).resolve().parent
    places = sorted(here.glob("_fastcall*.so"))
    if _in_source_tree():
        places += sorted((SOURCE_ROOT / "build" / "bindings" / "python").glob("_fastcall*.so"))
    return places


def _load() -> Optional[Any]:
    for path in _candidates():
        if not path.is_file():
            continue
        loader = importlib.machinery.ExtensionFileLoader(_NAME, str(path))
        spec = importlib.util.spec_from_file_location(_NAME, str(path), loader=loader)
        if spec is None:
            continue
        try:
            module = importlib.util.module_from_spec(spec)
            loader.exec_module(module)
            # The functions of the libsmd the package opened, never another
            # copy; and what _interrupt.blocking_ok() looks at.
            lib._load()
            opened = ctypes.CDLL(lib.path)
            module.bind(ctypes.cast(opened.smd_allreduce, ctypes.c_void_p).value,
                        ctypes.cast(opened.smd_barrier, ctypes.c_void_p).value,
                        _interrupt.MAIN_THREAD, _interrupt.getsignal, signal.default_int_handler,
                        _interrupt.armed)
            return module
        except (ImportError, OSError, AttributeError):
            continue
    return None


def get() -> Optional[Any]:
    """smd._fastcall, bound to the package's libsmd (loaded on the first
    call, once libsmd is open), or None when there is none (the cffi or
    ctypes path runs)."""
    global _module
    if _module is _UNSET:
        _module = _load()
    return _module
