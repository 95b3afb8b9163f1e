"""Inputs every rank can compute for every rank, and the results a
collective must produce from them, for every smd datatype."""

import numpy as np

import smd

DATATYPES = [d.name.lower() for d in smd.Datatype]
OPS = [o.name.lower() for o in smd.Op]

# Tolerances of the float types (results of small integers are exact except
# for avg on world sizes that are not powers of two).
RTOL = {"float16": 1e-3, "bfloat16": 1e-2, "float32": 1e-6, "float64": 1e-12}


def is_float(dtype):
    return dtype in RTOL


def numbers(dtype, rank, n, op="sum"):
    """The values rank `rank` contributes (int64 or float64, before the
    conversion to `dtype`): small integers, negative ones for signed types,
    1 and 2 for products so that they stay small."""
    i = np.arange(n, dtype=np.int64)
    if op == "prod":
        return 1 + (i + rank) % 2
    v = (i * 7 + rank * 3) % 11
    return v if dtype.startswith("uint") else v - 5


def to_dtype(values, dtype):
    """Values as an array of `dtype` (bfloat16: uint16 bits)."""
    if dtype == "bfloat16":
        return smd.to_bfloat16(np.asarray(values, dtype=np.float32))
    return np.asarray(values).astype(dtype)


def make(dtype, rank, n, op="sum"):
    return to_dtype(numbers(dtype, rank, n, op), dtype)


def as_numbers(array, dtype):
    """An array of `dtype` back to float64 numbers (bfloat16 from its bits)."""
    if dtype == "bfloat16":
        return smd.from_bfloat16(array).astype(np.float64)
    return np.asarray(array).astype(np.float64)


def reduced(dtype, op, size, n):
    """What reducing make(dtype, r, n, op) over ranks 0..size-1 gives, as
    numbers."""
    stack = np.stack([numbers(dtype, r, n, op) for r in range(size)]).astype(np.float64)
    if op == "sum":
        out = stack.sum(0)
    elif op == "prod":
        out = stack.prod(0)
    elif op == "min":
        out = stack.min(0)
    elif op == "max":
        out = stack.max(0)
    else:  # avg: integer types truncate toward zero
        out = stack.sum(0) / size
        if not is_float(dtype):
            out = np.trunc(out)
    # Round like the library: to the datatype, once.
    return as_numbers(to_dtype(out, dtype), dtype)


def check(got, dtype, want):
    got = as_numbers(got, dtype)
    assert got.shape == np.shape(want), (got.shape, np.shape(want))
    if is_float(dtype):
        np.testing.assert_allclose(got, want, rtol=RTOL[dtype], atol=0)
    else:
        np.testing.assert_array_equal(got, want)


def dtype_arg(dtype):
    """The dtype= argument a call needs: bfloat16 arrays are uint16."""
    return "bfloat16" if dtype == "bfloat16" else None
