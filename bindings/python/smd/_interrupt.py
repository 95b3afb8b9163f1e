"""Ctrl-C inside the library's own waits (smd_set_interrupt_fd), so that
blocking calls can be the library's blocking C functions, which cost a few
microseconds less per call than the nonblocking form plus a wait in slices.

Python's C-level signal handler writes each signal's number to the fd that
``signal.set_wakeup_fd`` names; this module hands a pipe of its own to both,
and the library's waits on the main thread read it (after spinning, about
once a millisecond): a SIGINT aborts the communicator and the call returns
SMD_ERR_ABORTED, then Python's pending handler raises KeyboardInterrupt.

A SIGINT that arrives while no call waits leaves its byte in the pipe; the
next long wait would take it for a new Ctrl-C. So SIGINT gets a handler of
ours that empties the pipe and raises KeyboardInterrupt, as Python's default
handler does; it replaces that default handler (never one the program set).
:func:`blocking_ok` says whether a blocking call may be the C function
without losing Ctrl-C: also on other threads than the main one (Python
raises KeyboardInterrupt in the main thread only) and where SIGINT is
ignored or kills the process. Where it may not (a SIGINT handler of the
program's, a wakeup fd taken by asyncio at first use), blocking calls keep
the wait in slices.
"""

from __future__ import annotations

import os
import signal
import threading

# The C module's getsignal: signal.getsignal's enum wrapping costs more than
# a whole small collective.
from _signal import getsignal as _getsignal
from typing import Any, Optional

from ._ffi import lib

_MAIN = threading.main_thread().ident
_SIGINT = int(signal.SIGINT)
_SIG_IGN = int(signal.SIG_IGN)
_SIG_DFL = int(signal.SIG_DFL)
_pipe: Optional[tuple] = None
_failed = False


def _drain() -> None:
    if _pipe is not None:
        try:
            while os.read(_pipe[0], 256):
                pass
        except (BlockingIOError, OSError):
            pass


def _on_sigint(signum: int, frame: Any) -> None:
    """Python's default_int_handler, after emptying the pipe."""
    _drain()
    raise KeyboardInterrupt


def _install() -> bool:
    global _pipe, _failed
    if _pipe is None:
        r, w = os.pipe()
        os.set_blocking(r, False)
        os.set_blocking(w, False)
        try:
            previous = signal.set_wakeup_fd(w, warn_on_full_buffer=False)
        except ValueError:  # not the main thread of the main interpreter
            previous = -2
        if previous != -1:  # asyncio (or the program) has it: leave theirs
            if previous >= 0:
                signal.set_wakeup_fd(previous)
            os.close(r)
            os.close(w)
            _failed = True
            return False
        try:
            set_fd = lib.smd_set_interrupt_fd
        except AttributeError:  # a libsmd older than the function
            set_fd = None
        if set_fd is None or set_fd(r) != 0:
            signal.set_wakeup_fd(-1)
            os.close(r)
            os.close(w)
            _failed = True
            return False
        _pipe = (r, w)
    _drain()  # SIGINTs handled before this handler was ours
    signal.signal(signal.SIGINT, _on_sigint)
    return True


def blocking_ok() -> bool:
    """Whether a blocking call on this thread may be the library's blocking
    C function: Ctrl-C interrupts its waits, or cannot raise here anyway."""
    if threading.get_ident() != _MAIN:
        return True
    handler = _getsignal(_SIGINT)
    if handler is _on_sigint or handler == _SIG_IGN or handler == _SIG_DFL:
        return True
    return handler is signal.default_int_handler and not _failed and _install()
