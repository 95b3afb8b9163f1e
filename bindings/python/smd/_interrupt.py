"""Ctrl-C inside the library's own waits (smd_set_interrupt_fd), so that
blocking calls can be the library's blocking C functions, which cost
several microseconds less per call than the nonblocking form plus a wait in
slices (docs/PERFORMANCE.md, "Python per-call cost").

Python's C-level signal handler writes each signal's number to the fd that
``signal.set_wakeup_fd`` names; this module hands a pipe of its own to both,
and the library's waits on the main thread read it (after spinning, about
once a millisecond): a SIGINT during the call aborts the communicator and
the call returns SMD_ERR_ABORTED, then Python's pending handler raises
KeyboardInterrupt. What is on the pipe when a call first looks came before
the call (a Ctrl-C already raised in Python) and is discarded by the library.

:func:`blocking_ok` says whether a blocking call may be the C function
without losing Ctrl-C: SIGINT has Python's default handler (the pipe is
armed), is ignored or kills the process, or the thread is not the main one
(Python raises KeyboardInterrupt in the main thread only). Where it may not
(a SIGINT handler of the program's, whose meaning the library cannot know;
a wakeup fd asyncio or the program had already taken; a libsmd without the
function), blocking calls keep the wait in slices.
"""

from __future__ import annotations

import os
import signal
import threading
from typing import Optional, Tuple

# The C module's getsignal: signal.getsignal wraps its answer in an enum,
# which costs more than a whole small collective.
from _signal import getsignal

from ._ffi import lib

MAIN_THREAD = threading.main_thread().ident
_SIGINT = int(signal.SIGINT)
_SIG_IGN = int(signal.SIG_IGN)
_SIG_DFL = int(signal.SIG_DFL)
_pipe: Optional[Tuple[int, int]] = None
_failed = False  # the pipe could not be set up: never try again
# 1 while the library reads _pipe on the main thread: a byte, which the
# compiled fast path (smd/_fast.py) also reads, in C, before each barrier.
armed = bytearray(1)


def _arm() -> bool:
    global _pipe, _failed
    if _pipe is None:
        set_fd = getattr(lib, "smd_set_interrupt_fd", None)  # None: an older libsmd
        r, w = os.pipe()
        os.set_blocking(r, False)
        os.set_blocking(w, False)
        previous = signal.set_wakeup_fd(w, warn_on_full_buffer=False) if set_fd else -2
        if previous != -1:  # asyncio (or the program) has it: leave theirs
            if previous >= 0:
                signal.set_wakeup_fd(previous)
            os.close(r)
            os.close(w)
            _failed = True
            return False
        _pipe = (r, w)
    if not armed[0]:
        armed[0] = lib.smd_set_interrupt_fd(_pipe[0]) == 0
    return bool(armed[0])


def _disarm() -> None:
    if armed[0]:
        lib.smd_set_interrupt_fd(-1)
        armed[0] = 0


def blocking_ok() -> bool:
    """Whether a blocking call on this thread may be the library's blocking
    C function: Ctrl-C interrupts its waits, or cannot raise here anyway."""
    if threading.get_ident() != MAIN_THREAD:
        return True
    handler = getsignal(_SIGINT)
    if handler is signal.default_int_handler:
        return bool(armed[0]) or (not _failed and _arm())
    if handler == _SIG_IGN or handler == _SIG_DFL:
        return True
    _disarm()  # the program's handler decides what a SIGINT means
    return False
