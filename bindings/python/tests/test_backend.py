"""The backend layer: the package runs on cffi or on ctypes, built from the
same declarations (meson runs the whole suite once per backend)."""

import os

import numpy as np
import pytest

import smd
from smd import _cdecl, _ffi

EXPECTED = os.environ.get("SMD_TEST_PY_BACKEND")


@pytest.mark.skipif(not EXPECTED, reason="SMD_TEST_PY_BACKEND is not set (meson sets it)")
def test_the_expected_backend_runs():
    assert _ffi.backend == EXPECTED


def test_ctypes_backend_reads_every_declaration():
    """The ctypes reader understands all of smd.h: every function, struct
    and enum cffi sees, with the sizes the C compiler gave the structs."""
    from smd import _ctypes_ffi

    ffi = _ctypes_ffi.FFI()
    ffi.cdef(_ffi.declarations_text())
    decls = _cdecl.read(_ffi.declarations_text())
    assert "smd_allreduce" in decls.functions and "smd_comm_t" in decls.opaque
    _ffi.lib.smd_get_version  # opens the library the package uses
    lib = ffi.dlopen(_ffi.lib.path)
    for name in decls.functions:
        getattr(lib, name)  # typed without error, and present in the library
    info = ffi.new("smd_rank_info_t *")
    # size_t, uint32_t, 8 int32_t, 4 bytes of padding, then char[64] and char[128].
    assert ffi.sizeof("smd_rank_info_t") == 240
    assert ffi.sizeof("smd_comm_stats_t") == _ffi.ffi.sizeof("smd_comm_stats_t")
    assert ffi.typeof("smd_op_t").relements["SMD_AVG"] == 4
    assert lib.SMD_ERR_TIMEOUT == 5 and lib.SMD_TAG_MAX == _ffi.constants["SMD_TAG_MAX"]
    assert ffi.string(lib.smd_result_string(lib.SMD_ERR_TIMEOUT)) == \
        _ffi.ffi.string(_ffi.lib.smd_result_string(5))
    options = ffi.new("smd_init_options_t *")
    assert lib.smd_init_options_init(options) == 0
    assert (options.rank, options.world_size, options.version) == (-1, -1, 1)
    assert options.struct_size == ffi.sizeof("smd_init_options_t")
    del info


def test_ctypes_values_behave_like_cffi():
    from smd import _ctypes_ffi

    ffi = _ctypes_ffi.FFI()
    ffi.cdef(_ffi.declarations_text())
    n = ffi.new("int *")
    n[0] = 7
    assert n[0] == 7
    sizes = ffi.new("size_t[]", [1, 2, 3])
    assert list(sizes) == [1, 2, 3] and len(ffi.new("int[]", 5)) == 5
    assert ffi.string(ffi.new("char[]", b"abc")) == b"abc"
    handle = ffi.new("smd_comm_t **")
    assert handle[0] == ffi.NULL
    assert ffi.cast("smd_stream_t", 0) == ffi.NULL
    assert ffi.cast("smd_stream_t", 0x1234) != ffi.NULL
    array = np.arange(4, dtype=np.int32)
    address = ffi.from_buffer(array, require_writable=True)
    assert int(address) == array.ctypes.data
    with pytest.raises(TypeError):
        ffi.from_buffer(b"read-only", require_writable=True)
    view = np.frombuffer(ffi.buffer(address, array.nbytes), dtype=np.int32)
    view[1] = 10
    assert array[1] == 10
    freed = []
    kept = ffi.gc(address.value, freed.append)
    value = kept.value
    del kept
    assert freed == [value]


def test_unsupported_declarations_are_refused():
    with pytest.raises(_cdecl.CdeclError, match="variadic"):
        _cdecl.read("int smd_printf(const char *format, ...);")
    with pytest.raises(_cdecl.CdeclError):
        _cdecl.read("union smd_u { int a; float b; } x;")


def test_backend_choice_is_validated(solo):
    import subprocess
    import sys

    env = dict(os.environ, SMD_PY_BACKEND="bogus")
    done = subprocess.run([sys.executable, "-c", "import smd"], env=env, capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode != 0 and "SMD_PY_BACKEND='bogus'" in done.stderr
    env["SMD_PY_BACKEND"] = "ctypes"
    done = subprocess.run([sys.executable, "-c", "from smd import _ffi; print(_ffi.backend)"],
                          env=env, capture_output=True, text=True, timeout=60, check=False)
    assert done.stdout.strip() == "ctypes", done.stderr
