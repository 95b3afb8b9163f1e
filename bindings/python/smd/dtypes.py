"""Datatypes and reduction operations, and how numpy dtypes map to them.

:class:`Datatype` and :class:`Op` are built from smd.h's enums. Every smd
datatype but bfloat16 is the numpy dtype of the same name (int8 ... float64,
float16 included). numpy has no bfloat16; such data lives in a ``uint16``
array holding the raw bits (the upper half of a float32), passed with
``dtype="bfloat16"`` (or ``dtype=smd.bfloat16``). :func:`to_bfloat16` and
:func:`from_bfloat16` convert. When ``ml_dtypes`` is importable, arrays of
``ml_dtypes.bfloat16`` are recognised without the ``dtype=`` argument.
"""

from __future__ import annotations

import enum
from typing import Any, Dict, Optional, Union

import numpy as np

from ._ffi import enum_values
from .errors import InvalidArgumentError

#: smd_datatype_t, named without the SMD_ prefix: Datatype.FLOAT32, ...
Datatype = enum.IntEnum("Datatype", enum_values("smd_datatype_t", "SMD_", skip=("SMD_DATATYPE_COUNT",)),
                        module=__name__)
Datatype.__doc__ = "smd_datatype_t: the element types collectives move and reduce."

#: smd_op_t, named without the SMD_ prefix: Op.SUM, Op.PROD, Op.MIN, Op.MAX, Op.AVG.
Op = enum.IntEnum("Op", enum_values("smd_op_t", "SMD_", skip=("SMD_OP_COUNT",)), module=__name__)
Op.__doc__ = "smd_op_t: reductions (AVG = SUM / ranks; integer AVG truncates toward zero)."

#: The marker for bfloat16 data held in uint16 arrays: ``dtype=smd.bfloat16``.
bfloat16 = Datatype.BFLOAT16

DatatypeLike = Union[Datatype, str, np.dtype, type, None]
OpLike = Union[Op, str, int]


def _ml_dtypes_bfloat16() -> Optional[np.dtype]:
    try:
        import ml_dtypes  # optional
    except ImportError:
        return None
    return np.dtype(ml_dtypes.bfloat16)


def _numpy_dtypes() -> Dict[Datatype, np.dtype]:
    """The numpy dtype that holds each datatype's elements."""
    out = {}
    for dt in Datatype:
        if dt is Datatype.BFLOAT16:
            out[dt] = _ml_dtypes_bfloat16() or np.dtype(np.uint16)
            continue
        try:
            out[dt] = np.dtype(dt.name.lower())
        except TypeError:  # a datatype numpy does not have: usable with dtype= only
            continue
    return out


#: Datatype -> the numpy dtype of its elements (uint16 carries bfloat16
#: without ml_dtypes).
NUMPY_DTYPES: Dict[Datatype, np.dtype] = _numpy_dtypes()
# numpy dtype -> Datatype, for arrays given without dtype=. A uint16 array
# is not taken for bfloat16 unless asked.
_FROM_NUMPY: Dict[np.dtype, Datatype] = {
    nd: dt for dt, nd in NUMPY_DTYPES.items() if not (dt is Datatype.BFLOAT16 and nd == np.uint16)
}


def datatype_of(dtype: np.dtype) -> Datatype:
    """The smd datatype of a numpy dtype; InvalidArgumentError if none."""
    found = _FROM_NUMPY.get(dtype)
    if found is not None:
        return found
    if dtype.byteorder not in "=|" and dtype.newbyteorder("=") in _FROM_NUMPY:
        raise InvalidArgumentError(f"buffer dtype {dtype.str} is not in native byte order")
    hint = " (for bfloat16 bits in a uint16 array, pass dtype='bfloat16')" if dtype == np.uint16 else ""
    names = ", ".join(str(nd) for nd in _FROM_NUMPY)
    raise InvalidArgumentError(f"numpy dtype {dtype} has no smd datatype{hint}; supported: {names}")


def resolve_datatype(spec: DatatypeLike) -> Datatype:
    """A Datatype from a Datatype, its name ("bfloat16", "FLOAT32") or a
    numpy dtype-like (np.float32, "f4")."""
    if isinstance(spec, Datatype):
        return spec
    if isinstance(spec, str):
        try:
            return Datatype[spec.upper()]
        except KeyError:
            pass
    try:
        return datatype_of(np.dtype(spec))
    except TypeError:
        raise InvalidArgumentError(f"unknown datatype {spec!r}; one of: "
                                   + ", ".join(d.name.lower() for d in Datatype)) from None


_OPS_BY_NAME = {spelling: op for op in Op for spelling in (op.name, op.name.lower())}


def resolve_op(spec: OpLike) -> Op:
    """An Op from an Op or its name ("sum", "AVG")."""
    if isinstance(spec, Op):
        return spec
    if isinstance(spec, str):
        found = _OPS_BY_NAME.get(spec)
        if found is not None:
            return found
        try:
            return Op[spec.upper()]
        except KeyError:
            pass
    elif isinstance(spec, int) and not isinstance(spec, bool):
        try:
            return Op(spec)
        except ValueError:
            pass
    raise InvalidArgumentError(f"unknown reduction op {spec!r}; one of: "
                               + ", ".join(o.name.lower() for o in Op))


def to_bfloat16(values: Any) -> np.ndarray:
    """float32 values -> bfloat16 bits in a uint16 array of the same shape,
    rounded to nearest-even as smd rounds (NaN stays NaN)."""
    f = np.ascontiguousarray(values, dtype=np.float32)
    bits = f.view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    nan = np.isnan(f)
    out = rounded.astype(np.uint16)
    out[nan] = ((bits[nan] >> 16) | 0x40).astype(np.uint16)  # quiet, keeps the sign
    return out


def from_bfloat16(bits: Any) -> np.ndarray:
    """bfloat16 bits (uint16) -> float32 values of the same shape (exact)."""
    b = np.ascontiguousarray(bits)
    if b.dtype.itemsize != 2:
        raise InvalidArgumentError(f"bfloat16 bits must be 2-byte elements, got {b.dtype}")
    return (b.view(np.uint16).astype(np.uint32) << 16).view(np.float32)
