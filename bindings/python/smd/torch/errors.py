"""The exceptions smd's c10d backend raises inside torch.distributed.

Each is the smd exception of its result code (so ``except smd.Error`` and
``except smd.PeerFailureError`` work as with the plain binding) and also a
``RuntimeError``, which is what torch's own code and its users catch from a
process group. ``code`` and ``message`` are as on :class:`smd.Error`; the
text starts with ``smd:`` and ends with the code's name.

Errors that torch passes on through its own machinery (a DDP bucket's
Future, ``Work.wait()`` inside torch) may arrive as plain ``RuntimeError``
with the same text.
"""

from __future__ import annotations

from typing import Dict, Type

from .. import errors as _smd_errors


class Error(_smd_errors.Error, RuntimeError):
    """An smd failure under torch.distributed: an :class:`smd.Error` and a
    ``RuntimeError``."""


def _torch_class(base: Type[_smd_errors.Error]) -> Type[Error]:
    return type(base.__name__, (Error, base), {
        "__module__": __name__,
        "__doc__": f"{base.__doc__} Raised by smd.torch; also a RuntimeError.",
        "default_code": base.default_code,
    })


_BY_CODE: Dict[int, Type[Error]] = {code: _torch_class(cls) for code, cls in _smd_errors._CLASSES.items()}
globals().update({cls.__name__: cls for cls in _BY_CODE.values()})


def error_for(code: int, message: str) -> Error:
    """The exception for an smd result code and its message (the backend's
    C++ side raises these)."""
    cls = _BY_CODE.get(code, Error)
    return cls(message, code)


__all__ = ["Error", "error_for"] + sorted(cls.__name__ for cls in _BY_CODE.values())
