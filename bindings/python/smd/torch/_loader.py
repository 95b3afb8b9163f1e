"""Finding and loading the compiled backend, smd.torch._smd_c10d.

It is built by meson (bindings/torch) against the torch this Python
imports; first found wins:

1. ``$SMD_TORCH_BACKEND``: a path to the extension (no fallback when set);
2. next to this file, where ``meson install`` (or a copy) puts it;
3. the source tree's build directories: ``build/bindings/torch/`` (built
   by meson with python3: Debian's torch 1.13) and
   ``build-torch2/bindings/torch/`` (built with .venv's torch 2.x by
   scripts/test.sh), skipping one whose ``_smd_c10d.torch_version`` (written
   by meson beside it) names another torch than the one running.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
from pathlib import Path
from typing import List, Optional, Tuple

from .._ffi import SOURCE_ROOT, _in_source_tree, lib

MODULE = "_smd_c10d"
HERE = Path(__file__).resolve().parent


def _named(folder: Path) -> List[Path]:
    """Files in `folder` that are the extension under any of this
    Python's extension suffixes (_smd_c10d.cpython-311-x86_64-linux-gnu.so, ...)."""
    return [folder / (MODULE + suffix) for suffix in importlib.machinery.EXTENSION_SUFFIXES
            if (folder / (MODULE + suffix)).is_file()]


def candidates() -> List[Tuple[Path, str]]:
    """Where the extension is looked for, in order: (path, why)."""
    explicit = os.environ.get("SMD_TORCH_BACKEND")
    if explicit:
        return [(Path(explicit), "SMD_TORCH_BACKEND")]
    found = [(p, "next to smd.torch") for p in _named(HERE)]
    if _in_source_tree():
        for build in ("build", "build-torch2"):
            found += [(p, "build tree") for p in _named(SOURCE_ROOT / build / "bindings" / "torch")]
    return found


def major_minor(version: str) -> Tuple[int, ...]:
    return tuple(int(x) for x in version.split("+")[0].split(".")[:2])


def built_for(path: Path) -> Optional[str]:
    """The torch version meson built the extension at `path` for, or None
    when it does not say (an installed copy)."""
    stamp = path.parent / (MODULE + ".torch_version")
    try:
        return stamp.read_text().strip() or None
    except OSError:
        return None


def load():
    """The extension module; ImportError saying where it was looked for."""
    # libsmd first, found as the smd package finds it: the extension's
    # dependency on libsmd.so.0 is then met by that copy (by its soname),
    # wherever the extension was installed or copied to.
    lib._load()
    import torch

    tried = []
    other_torch = None  # a copy built for another torch was found
    for path, why in candidates():
        if not path.is_file():
            tried.append(f"{path} ({why}): no such file")
            continue
        version = built_for(path)
        if version and major_minor(version) != major_minor(torch.__version__):
            tried.append(f"{path} ({why}): built for torch {version}, this is torch {torch.__version__}")
            other_torch = other_torch or version
            continue
        name = f"{__package__}.{MODULE}"
        loader = importlib.machinery.ExtensionFileLoader(name, str(path))
        spec = importlib.util.spec_from_file_location(name, str(path), loader=loader)
        module = importlib.util.module_from_spec(spec)
        try:
            loader.exec_module(module)
        except ImportError as e:
            tried.append(f"{path} ({why}): {e}")
            continue
        return module, path
    where = "\n  ".join(tried) if tried else "(no candidate: not installed, no build tree)"
    rebuild = ""
    if other_torch:
        rebuild = (f"\nrun under torch {other_torch.split('+')[0]}, or install smd again where this "
                   "torch is (pip install --no-build-isolation . in smd's source tree or sdist "
                   "builds the backend against the torch it finds); or")
    raise ImportError("smd.torch: cannot load the c10d backend extension; tried:\n  " + where +
                      rebuild + "\nbuild it with meson (meson setup build && ninja -C build: needs torch's "
                      "C++ headers, Debian: libtorch-dev pybind11-dev) or set SMD_TORCH_BACKEND "
                      "to its path")
