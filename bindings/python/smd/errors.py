"""Exceptions: one class per smd result code, and the one check() that maps
a result to its exception with the library's message.

Every exception is an :class:`smd.Error` carrying ``code`` (a
:class:`smd.Result`) and ``message`` (the library's text from
``smd_last_error()``, read on the failing thread right after the failing
call, or the binding's own text for errors it detects before calling the
library). Where a built-in exception means the same thing, the class also
derives from it: ``except TimeoutError`` catches :class:`smd.TimeoutError`,
``except ValueError`` catches :class:`smd.InvalidArgumentError`.
"""

from __future__ import annotations

import builtins
import enum
from typing import Any, Dict, Optional, Type

from ._ffi import enum_values, ffi, lib

#: The result codes of smd.h (smd_result_t), named without the SMD_ prefix.
Result = enum.IntEnum("Result", enum_values("smd_result_t", "SMD_"), module=__name__)
Result.__doc__ = "smd_result_t: SUCCESS, IN_PROGRESS and the ERR_* codes."

# The class of each code, filled by the class statements below (in their order).
_CLASSES: Dict[int, Type[Error]] = {}


class Error(Exception):
    """Base class of every smd error.

    Attributes:
        code: the result code (:class:`smd.Result`).
        message: what went wrong, with context (call, rank, peer).
    """

    #: The result code instances of this class carry by default.
    default_code: Optional[str] = None

    def __init_subclass__(cls, code: Optional[str] = None, **kwargs: Any) -> None:
        """``class X(Error, code="ERR_..."):`` gives X that default_code and,
        for the first class to name the code (the ones below), makes X the
        class error_for raises for it."""
        super().__init_subclass__(**kwargs)
        if code is not None:
            cls.default_code = code
            _CLASSES.setdefault(Result[code], cls)

    def __init__(self, message: str, code: Optional[int] = None) -> None:
        if code is None:
            code = Result[self.default_code] if self.default_code else Result.ERR_INTERNAL
        try:
            code = Result(code)
        except ValueError:  # a code newer than this header
            pass
        super().__init__(message)
        self.code = code
        self.message = message

    def __str__(self) -> str:
        return self.message or (self.code.name if isinstance(self.code, Result) else str(self.code))

    def __reduce__(self):
        return (type(self), (self.message, int(self.code)))


class InvalidArgumentError(Error, ValueError, code="ERR_INVALID_ARGUMENT"):
    """A wrong argument: bad buffer, datatype, op, rank, count (SMD_ERR_INVALID_ARGUMENT)."""


class InvalidUsageError(Error, code="ERR_INVALID_USAGE"):
    """A call not allowed now: destroyed communicator, freed request (SMD_ERR_INVALID_USAGE)."""


class NoMemoryError(Error, MemoryError, code="ERR_NO_MEMORY"):
    """Out of memory (SMD_ERR_NO_MEMORY)."""


class TimeoutError(Error, builtins.TimeoutError, code="ERR_TIMEOUT"):
    """The library's deadline (SMD_TIMEOUT or ``smd.init(timeout=)``) passed; the
    operation failed (SMD_ERR_TIMEOUT). The message names the ranks waited for."""


class PeerFailureError(Error, code="ERR_PEER_FAILURE"):
    """A peer process died, disconnected or failed (SMD_ERR_PEER_FAILURE)."""


class AbortedError(Error, code="ERR_ABORTED"):
    """The communicator was aborted, here or by a peer (SMD_ERR_ABORTED)."""


class MismatchError(Error, code="ERR_MISMATCH"):
    """Ranks disagree on a collective's arguments (SMD_ERR_MISMATCH)."""


class TransportError(Error, code="ERR_TRANSPORT"):
    """The transport failed, other than a peer failure (SMD_ERR_TRANSPORT)."""


class PluginError(Error, code="ERR_PLUGIN"):
    """A transport plugin could not be found, loaded or initialised (SMD_ERR_PLUGIN)."""


class NotSupportedError(Error, code="ERR_NOT_SUPPORTED"):
    """Valid, but not possible in this build or configuration (SMD_ERR_NOT_SUPPORTED)."""


class SystemCallError(Error, OSError, code="ERR_SYSTEM"):
    """An operating-system call failed (SMD_ERR_SYSTEM)."""


class BootstrapError(Error, code="ERR_BOOTSTRAP"):
    """Forming the world failed: store unreachable, token refused, a rank
    missing (SMD_ERR_BOOTSTRAP)."""


class TruncatedError(Error, code="ERR_TRUNCATED"):
    """A received message was larger than the receive buffer (SMD_ERR_TRUNCATED)."""


class InternalError(Error, code="ERR_INTERNAL"):
    """A bug in smd; please report it with the message (SMD_ERR_INTERNAL)."""


class RevokedError(Error, code="ERR_REVOKED"):
    """The communicator was revoked, here or by a peer (SMD_ERR_REVOKED): it
    can still be agreed on, shrunk and destroyed (docs/ELASTIC.md)."""


def error_for(code: int, message: str) -> Error:
    """The exception for a result code (smd.Error itself for a code this
    binding does not know, e.g. from a newer library)."""
    cls = _CLASSES.get(code)
    if cls is None:
        name = ffi.string(lib.smd_result_string(code)).decode()
        return Error(f"{name}: {message}" if message else name, code)
    return cls(message, code)


def last_error_message() -> str:
    """smd_last_error(): the message of the last failed smd call on this thread."""
    return ffi.string(lib.smd_last_error()).decode("utf-8", errors="replace")


def check(result: int) -> None:
    """Raise the exception for `result` unless it is SMD_SUCCESS. Call it
    right after the smd call that returned `result`, on the same thread:
    the message is read from smd_last_error()."""
    if result != Result.SUCCESS:
        raise error_for(result, last_error_message())
