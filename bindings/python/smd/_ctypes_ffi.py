"""The ctypes backend: the part of cffi's ``FFI`` surface the package uses,
built with ctypes from the same declarations cffi reads (smd._cdecl reads
the text smd._cdefgen makes from smd.h), for machines without cffi.

What the rest of the package sees behaves as cffi's objects do:

- ``new("T *")`` is a zeroed T whose ``[0]`` reads and writes it; for a
  struct, its fields are attributes (as a cffi struct pointer's are);
  ``new("T[]", n or list)`` an array; ``new("char[]", b"...")`` a
  NUL-terminated copy;
- pointers to void and to opaque structs (handles, ``smd_stream_t``) are
  plain addresses: ints, or None for NULL (``NULL`` is None), so they
  compare as cffi's cdata pointers do;
- ``from_buffer``, ``cast``, ``gc`` give addresses that keep what they
  point into alive; ``buffer`` a writable view of memory;
- ``string`` reads a C string from whatever ctypes returned for one;
- functions of the library have their argument and result types set, and
  its enum members and ``#define`` constants are attributes, as cffi's are.

Calls release the GIL, as cffi's do.
"""

from __future__ import annotations

import ctypes
import weakref
from typing import Any, Callable, Dict, Optional

import numpy as np

from . import _cdecl

_PRIMITIVES: Dict[str, Any] = {
    "void": None,
    "char": ctypes.c_char, "signed char": ctypes.c_byte, "unsigned char": ctypes.c_ubyte,
    "short": ctypes.c_short, "unsigned short": ctypes.c_ushort,
    "int": ctypes.c_int, "signed int": ctypes.c_int, "unsigned int": ctypes.c_uint,
    "long": ctypes.c_long, "unsigned long": ctypes.c_ulong,
    "long long": ctypes.c_longlong, "unsigned long long": ctypes.c_ulonglong,
    "float": ctypes.c_float, "double": ctypes.c_double, "_Bool": ctypes.c_bool,
    "size_t": ctypes.c_size_t, "ssize_t": ctypes.c_ssize_t,
    "int8_t": ctypes.c_int8, "uint8_t": ctypes.c_uint8,
    "int16_t": ctypes.c_int16, "uint16_t": ctypes.c_uint16,
    "int32_t": ctypes.c_int32, "uint32_t": ctypes.c_uint32,
    "int64_t": ctypes.c_int64, "uint64_t": ctypes.c_uint64,
    "intptr_t": ctypes.c_ssize_t, "uintptr_t": ctypes.c_size_t,
}

NULL = None


class Address(ctypes.c_void_p):
    """An address passed as ``void *`` that keeps alive the object whose
    memory it points into (``keep``)."""

    def __init__(self, value: Optional[int], keep: Any = None) -> None:
        super().__init__(value)
        self.keep = keep

    def __eq__(self, other: Any) -> bool:
        if isinstance(other, ctypes.c_void_p):
            other = other.value
        return self.value == other

    def __hash__(self) -> int:
        return hash(self.value)

    def __int__(self) -> int:
        return self.value or 0


class _Struct(ctypes.Structure):
    """A struct made by new("T *"): fields are attributes, and [0] is the
    struct itself, as through a cffi pointer."""

    def __getitem__(self, index: int) -> "_Struct":
        if index != 0:
            raise IndexError("a struct made by new('T *') has one element")
        return self


class _EnumType:
    """What typeof() gives for an enum: its members by name."""

    def __init__(self, members: Dict[str, int]) -> None:
        self.relements = dict(members)
        self.elements = {v: k for k, v in reversed(list(members.items()))}


class FFI:
    """ctypes in the shape of the part of cffi.FFI that smd uses."""

    NULL = NULL

    def __init__(self) -> None:
        self._decls = _cdecl.Declarations()
        self._types: Dict[str, Any] = {}

    # -- declarations --------------------------------------------------------

    def cdef(self, text: str) -> None:
        """Read the declarations (the text smd._cdefgen makes)."""
        self._decls = _cdecl.read(text)
        self._types = {}
        for name in self._decls.structs:  # built in header order: fields only use earlier ones
            self._struct(name)

    def _struct(self, name: str) -> Any:
        made = self._types.get(name)
        if made is None:
            made = type(name, (_Struct,), {})
            self._types[name] = made
            made._fields_ = [(fname, self._ctype(ftype, field=True))
                             for fname, ftype in self._decls.structs[name]]
        return made

    def _named(self, name: str) -> Any:
        if name in _PRIMITIVES:
            return _PRIMITIVES[name]
        if name in self._decls.enums:
            return ctypes.c_int  # every enum of smd.h spans int32 (its RANGE_MIN_/MAX_ members)
        if name in self._decls.structs:
            return self._struct(name)
        if name in self._decls.typedefs:
            return self._ctype(self._decls.typedefs[name])
        if name in self._decls.opaque:
            raise _cdecl.CdeclError(f"{name} is opaque: only pointers to it exist")
        raise _cdecl.CdeclError(f"unknown type {name}")

    def _is_address(self, target: Any) -> bool:
        """Pointers to these are plain addresses (c_void_p)."""
        if target[0] == "name":
            name = target[1]
            if name == "void" or name in self._decls.opaque:
                return True
            if name in self._decls.typedefs:
                return self._is_address(self._decls.typedefs[name])
        return False

    def _ctype(self, ctype: Any, field: bool = False) -> Any:
        kind = ctype[0]
        if kind == "name":
            return self._named(ctype[1])
        if kind == "array":
            if ctype[2] is None:
                raise _cdecl.CdeclError("an array of unknown size here")
            return self._ctype(ctype[1], field) * ctype[2]
        if kind == "func":
            return ctypes.CFUNCTYPE(self._result(ctype[1]), *(self._ctype(p) for p in ctype[2]))
        target = ctype[1]
        if self._is_address(target):
            return ctypes.c_void_p
        if target[0] == "func":
            return self._ctype(target)
        if target == ("name", "char"):
            # Arguments and results read as bytes; fields take char arrays.
            return ctypes.POINTER(ctypes.c_char) if field else ctypes.c_char_p
        return ctypes.POINTER(self._ctype(target))

    def _result(self, ctype: Any) -> Any:
        return None if ctype == ("name", "void") else self._ctype(ctype)

    def _type_of(self, text: str) -> Any:
        return self._ctype(_cdecl.parse_type(text))

    def typeof(self, text: str) -> Any:
        """An enum's members (``.relements``); other types as ctypes types."""
        ctype = _cdecl.parse_type(text)
        if ctype[0] == "name" and ctype[1] in self._decls.enums:
            return _EnumType(self._decls.enums[ctype[1]])
        return self._ctype(ctype)

    def sizeof(self, what: Any) -> int:
        return ctypes.sizeof(self._type_of(what) if isinstance(what, str) else what)

    def dlopen(self, path: str) -> "Library":
        return Library(self, ctypes.CDLL(path))

    # -- values ----------------------------------------------------------------

    def new(self, text: str, init: Any = None) -> Any:
        """Zeroed memory of the type, owned by the returned object."""
        ctype = _cdecl.parse_type(text)
        if ctype[0] == "ptr":
            target = self._ctype(ctype[1])
            if isinstance(target, type) and issubclass(target, _Struct):
                value = target()
                if init is not None:
                    raise _cdecl.CdeclError("new('struct *', init) is not supported")
                return value
            value = (target * 1)()
            if init is not None:
                value[0] = init
            return value
        if ctype[0] == "array":
            element = self._ctype(ctype[1])
            if isinstance(init, (bytes, bytearray)) and element is ctypes.c_char:
                length = len(init) + 1 if ctype[2] is None else ctype[2]
                return ctypes.create_string_buffer(bytes(init), length)
            if isinstance(init, int) and ctype[2] is None:
                return (element * init)()
            items = list(init) if init is not None else []
            length = len(items) if ctype[2] is None else ctype[2]
            return (element * length)(*items)
        raise _cdecl.CdeclError(f"new({text!r}): a pointer or array type is expected")

    def cast(self, text: str, value: Any) -> Any:
        """An address (or None for 0) for pointer types; the converted
        integer for integer types."""
        ctype = _cdecl.parse_type(text)
        target = self._ctype(ctype)
        if ctype[0] == "ptr" or target is ctypes.c_void_p:
            address = _address_of(value)
            return Address(address, value) if address else NULL
        return target(int(value)).value

    def string(self, value: Any, maxlen: int = -1) -> bytes:
        """The bytes of a C string: a char* result, a char array field, an address."""
        if value is None:
            raise TypeError("string(NULL)")
        if isinstance(value, bytes):
            data = value
        elif isinstance(value, ctypes.Array):
            data = bytes(memoryview(value).cast("B")).split(b"\0", 1)[0]
        else:
            data = ctypes.string_at(_address_of(value))
        return data[:maxlen] if maxlen >= 0 else data

    def from_buffer(self, obj: Any, require_writable: bool = False) -> Address:
        """The address of `obj`'s memory (buffer protocol or numpy), alive as
        long as the returned object is."""
        array = obj if isinstance(obj, np.ndarray) else np.frombuffer(obj, dtype=np.uint8)
        if require_writable and not array.flags.writeable:
            raise TypeError("from_buffer(): a writable buffer is required")
        return Address(array.__array_interface__["data"][0], (obj, array))

    def buffer(self, pointer: Any, size: int) -> Any:
        """`size` bytes at `pointer`, as a writable buffer-protocol object."""
        view = (ctypes.c_char * size).from_address(_address_of(pointer))
        view.keep = pointer  # type: ignore[attr-defined]
        return view

    def gc(self, pointer: Any, destructor: Callable[[Any], Any], size: int = 0) -> Address:
        """An address that calls `destructor(address)` once it is garbage."""
        address = Address(_address_of(pointer))
        weakref.finalize(address, destructor, address.value)
        return address


def _address_of(value: Any) -> int:
    if value is None:
        return 0
    if isinstance(value, int):
        return value
    if isinstance(value, ctypes.c_void_p):
        return value.value or 0
    if isinstance(value, (ctypes.Array, ctypes.Structure)):
        return ctypes.addressof(value)
    if isinstance(value, ctypes._Pointer):  # type: ignore[attr-defined]
        return ctypes.cast(value, ctypes.c_void_p).value or 0
    return int(value)


class Library:
    """A dlopen()ed library with the declared functions typed, and the
    header's constants as attributes."""

    def __init__(self, ffi: FFI, handle: ctypes.CDLL) -> None:
        self._ffi = ffi
        self._handle = handle

    def __getattr__(self, name: str) -> Any:
        decls = self._ffi._decls
        if name in decls.functions:
            _, result, params = decls.functions[name]
            fn = getattr(self._handle, name)
            fn.restype = self._ffi._result(result)
            fn.argtypes = [self._ffi._ctype(p) for p in params]
        elif name in decls.constants:
            fn = decls.constants[name]
        else:
            raise AttributeError(f"smd.h declares no {name}")
        setattr(self, name, fn)
        return fn
