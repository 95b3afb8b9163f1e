"""smd.h, after the C preprocessor, parses as-is with cffi (the Python
binding's route), declares every SMD_API function, and agrees with the
library on the layout of smd_init_options_t and on what calls return.

usage: cffi_parse.py CC SMD_H LIBSMD
Exit 0 = pass, 1 = fail, 77 = skipped (cffi not importable)."""

import subprocess
import sys

from header_functions import declared_functions

SKIP = 77


def main():
    cc, header, lib = sys.argv[1:4]
    try:
        import cffi
    except ImportError:
        print("cffi is not importable")
        return SKIP

    cdef = subprocess.run(
        [cc, "-E", "-P", "-DSMD_NO_SYSTEM_INCLUDES", "-DSMD_CDEF", header],
        check=True, capture_output=True, text=True).stdout
    ffi = cffi.FFI()
    ffi.cdef(cdef)  # raises on anything cffi cannot parse

    problems = []
    smd = ffi.dlopen(lib)
    available = set(dir(smd))
    for fn in declared_functions(header):
        if fn not in available:
            problems.append(f"cffi sees no declaration of {fn}")

    major, minor, patch = ffi.new("int *"), ffi.new("int *"), ffi.new("int *")
    if smd.smd_get_version(major, minor, patch) != smd.SMD_SUCCESS:
        problems.append("smd_get_version failed through cffi")
    if major[0] < 0 or minor[0] < 0 or patch[0] < 0:
        problems.append(f"smd_get_version gave {major[0]}.{minor[0]}.{patch[0]}")

    # The library fills the struct as its C compiler laid it out; cffi must
    # have computed the same size and field offsets to read it back.
    opts = ffi.new("smd_init_options_t *")
    if smd.smd_init_options_init(opts) != smd.SMD_SUCCESS:
        problems.append("smd_init_options_init failed through cffi")
    want = {"struct_size": ffi.sizeof("smd_init_options_t"), "version": 1, "rank": -1,
            "world_size": -1, "store_port": -1, "timeout_ms": 0}
    for field, value in want.items():
        if getattr(opts, field) != value:
            problems.append(f"smd_init_options_t.{field} reads {getattr(opts, field)} "
                            f"through cffi, expected {value}")
    for field in ("store_addr", "job_token", "transport", "store", "store_prefix"):
        if getattr(opts, field) != ffi.NULL:
            problems.append(f"smd_init_options_t.{field} is not NULL through cffi")

    name = ffi.string(smd.smd_result_string(smd.SMD_ERR_TIMEOUT)).decode()
    if name != "SMD_ERR_TIMEOUT":
        problems.append(f"smd_result_string(SMD_ERR_TIMEOUT) = {name!r}")

    for p in problems:
        print("FAIL:", p)
    print(f"cffi parsed {len(cdef)} bytes of declarations")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
