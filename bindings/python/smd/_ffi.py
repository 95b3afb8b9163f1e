"""Loading: the declarations (from smd.h), the backend that reads them, and
libsmd (ABI mode).

The backend is cffi when it can be imported, else ctypes
(:mod:`smd._ctypes_ffi`, which builds its types from the same
declarations); ``SMD_PY_BACKEND=cffi`` or ``=ctypes`` forces one. Both give
the rest of the package the same ``ffi``/``lib`` surface (cffi's), so no
other module knows which one runs; :data:`backend` says.

Declarations, first found wins:

1. ``$SMD_HEADER``: an smd.h to preprocess (needs a C compiler);
2. ``smd/_cdef.h``: generated from smd.h when the package was built
   (``pip install``), so an installed package needs no compiler;
3. the source tree's ``include/smd.h``, preprocessed at import, when the
   package runs from ``bindings/python`` (``PYTHONPATH=bindings/python``).

The library is opened on first use (importing ``smd`` or running
``python -m smd.run`` does not need it), first found wins:

1. ``$SMD_LIBRARY``: a path to libsmd.so (no fallback when set);
2. the source tree's build directory: ``build/src/libsmd.so.0``;
3. next to the package: ``smd/libsmd.so.0``, or inside it:
   ``smd/_lib/libsmd.so.0`` (``pip install .`` at the repository root);
4. where pkg-config said libsmd was when the package was installed
   (``smd/_libdir.txt``);
5. the system loader's search path (``LD_LIBRARY_PATH``, ld.so.cache):
   ``libsmd.so.0``.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Dict, List, Tuple

from . import _cdefgen

BACKENDS = ("cffi", "ctypes")

PACKAGE_DIR = Path(__file__).resolve().parent
GENERATED_CDEF = PACKAGE_DIR / "_cdef.h"
# bindings/python/smd -> the repository root, when running from the source tree.
SOURCE_ROOT = PACKAGE_DIR.parent.parent.parent
SONAME = "libsmd.so.0"


def _in_source_tree() -> bool:
    return (SOURCE_ROOT / "include" / "smd.h").is_file() and \
        (SOURCE_ROOT / "bindings" / "python" / "smd").resolve() == PACKAGE_DIR


def _read_declarations() -> Tuple[str, str]:
    """The cdef text and where it came from."""
    header = os.environ.get("SMD_HEADER")
    if header:
        return _cdefgen.generate(header), f"{header} (SMD_HEADER, preprocessed)"
    if GENERATED_CDEF.is_file():
        return GENERATED_CDEF.read_text(encoding="utf-8"), f"{GENERATED_CDEF} (generated)"
    if _in_source_tree():
        header = SOURCE_ROOT / "include" / "smd.h"
        return _cdefgen.generate(header), f"{header} (preprocessed)"
    raise ImportError(f"smd: no declarations: {GENERATED_CDEF} is missing (reinstall the "
                      "package) and this is not a source tree; set SMD_HEADER to an smd.h")


try:
    _cdef_text, cdef_origin = _read_declarations()
except _cdefgen.CdefError as e:
    raise ImportError(f"smd: cannot read smd.h: {e}") from e

def _choose_backend() -> str:
    wanted = os.environ.get("SMD_PY_BACKEND", "").strip().lower()
    if wanted not in ("", "auto") + BACKENDS:
        raise ImportError(f"smd: SMD_PY_BACKEND={wanted!r} is not one of auto, cffi, ctypes")
    if wanted == "ctypes":
        return "ctypes"
    try:
        import cffi  # noqa: F401  (only whether it imports)
    except ImportError as e:
        if wanted == "cffi":
            raise ImportError(f"smd: SMD_PY_BACKEND=cffi but cffi cannot be imported: {e}") from e
        return "ctypes"
    return "cffi"


#: The backend in use: "cffi" or "ctypes".
backend: str = _choose_backend()
if backend == "cffi":
    import cffi

    ffi = cffi.FFI()
else:
    from . import _ctypes_ffi

    ffi = _ctypes_ffi.FFI()
try:
    ffi.cdef(_cdef_text)
except ValueError as e:  # the ctypes reader's CdeclError
    raise ImportError(f"smd: cannot read the declarations of {cdef_origin}: {e}") from e
#: The header's integer #define constants (SMD_TAG_MAX, SMD_UNDEFINED, ...).
constants: Dict[str, int] = _cdefgen.constants_of(_cdef_text)
header_version: Tuple[int, int, int] = _cdefgen.split_version(constants)


def declarations_text() -> str:
    """The declarations both backends read (smd.h after the preprocessor)."""
    return _cdef_text


def enum_values(ctype: str, prefix: str, skip: Tuple[str, ...] = ()) -> Dict[str, int]:
    """The members of a C enum of the header, without `prefix`, in value
    order: enum_values("smd_op_t", "SMD_") gives {"SUM": 0, ...}. The
    header's range sentinels (SMD_*_RANGE_MIN_/MAX_) are not members."""
    members = ffi.typeof(ctype).relements
    return {name[len(prefix):]: value for name, value in sorted(members.items(), key=lambda kv: kv[1])
            if name.startswith(prefix) and name not in skip and not name.endswith("_")}


def library_candidates() -> List[Tuple[str, str]]:
    """Where libsmd is looked for, in order: (what to dlopen, why)."""
    explicit = os.environ.get("SMD_LIBRARY")
    if explicit:
        return [(explicit, "SMD_LIBRARY")]
    found = []
    if _in_source_tree():
        found.append((str(SOURCE_ROOT / "build" / "src" / SONAME), "build tree"))
    found.append((str(PACKAGE_DIR / SONAME), "next to the package"))
    found.append((str(PACKAGE_DIR / "_lib" / SONAME), "inside the package (a wheel)"))
    recorded = PACKAGE_DIR / "_libdir.txt"
    if recorded.is_file():
        found.append((str(Path(recorded.read_text(encoding="utf-8").strip()) / SONAME),
                      "pkg-config at install"))
    found.append((SONAME, "system loader path"))
    return [(path, why) for path, why in found
            if why == "system loader path" or Path(path).exists()]


class _Library:
    """libsmd, opened on first attribute access. Each function or constant
    is then stored on this object, so later look-ups are plain attributes."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._lib = None
        self.path: str | None = None

    def _load(self):
        with self._lock:
            if self._lib is None:
                tried = []
                for path, why in library_candidates():
                    try:
                        self._lib = ffi.dlopen(path)
                        self.path = path
                        break
                    except OSError as e:
                        tried.append(f"{path} ({why}): {e}")
                else:
                    raise OSError("smd: cannot load libsmd; tried:\n  " + "\n  ".join(tried) +
                                  "\nbuild it (meson setup build && ninja -C build) or set "
                                  "SMD_LIBRARY to its path")
        return self._lib

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)
        value = getattr(self._load(), name)
        setattr(self, name, value)
        return value


lib = _Library()
