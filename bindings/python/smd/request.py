"""Requests (smd_request_t) and interruptible waiting.

Every wait in this binding is made of short slices (SLICE_MS), so Python
gets control back between slices and delivers KeyboardInterrupt (Ctrl-C);
the library's own deadline still applies to the operation. C calls that
have no nonblocking form (forming a world, creating communicators) run on
a helper thread that the calling thread waits for in slices
(:func:`call_interruptibly`).
"""

from __future__ import annotations

import builtins
import threading
import time
import weakref
from typing import Any, Callable, List, NamedTuple, Optional, Protocol, Sequence, Set, Tuple

from ._ffi import ffi, lib
from .errors import (Error, InvalidArgumentError, InvalidUsageError, Result, error_for,
                     last_error_message)

class RequestOwner(Protocol):
    """What requests need of their communicator (a Comm; this module sits
    below comm.py and does not import it): the completions still pending
    on it, and abort() for a wait that Ctrl-C interrupts."""

    _pending: Set[Any]

    def abort(self) -> None: ...


#: Milliseconds of one wait slice: the longest Ctrl-C waits to be noticed.
SLICE_MS = 50

_IN_PROGRESS = int(Result.IN_PROGRESS)
_SUCCESS = int(Result.SUCCESS)

Outcome = Tuple[int, str]  # (result code, message)


class Status(NamedTuple):
    """What a finished receive got (smd_status_t): the sender's rank, the
    message's tag and its size. For other operations source and tag are
    -1."""
    source: int
    tag: int
    count: int
    nbytes: int


class Completion:
    """One C request, until it is freed: how to learn that it finished.
    Shared by a Request, its finalizer and its communicator (which waits
    for it before being destroyed).

    Collective requests finish on the communicator's worker thread, which
    applies the deadline, abort and peer checks: waiting in slices of
    smd_request_wait_timeout is enough. Point-to-point requests get those
    checks only inside smd_request_wait (a finite wait_timeout merely polls),
    so a point-to-point request that is not finished at once is waited for
    by smd_request_wait on a helper thread, and the caller waits for that
    thread in slices.
    """

    __slots__ = ("handle", "p2p", "_done", "_outcome")

    def __init__(self, handle: Any, p2p: bool) -> None:
        self.handle = handle
        self.p2p = p2p
        self._done: Optional[threading.Event] = None
        self._outcome: Outcome = (_SUCCESS, "")

    def _start_waiter(self) -> None:
        handle = self.handle
        done = self._done = threading.Event()

        def run() -> None:
            result = lib.smd_request_wait(handle)
            self._outcome = (result, last_error_message() if result != _SUCCESS else "")
            done.set()

        threading.Thread(target=run, name="smd-request-wait", daemon=True).start()

    def poll(self, timeout_ms: int) -> Optional[Outcome]:
        """Wait up to timeout_ms; the outcome if the operation finished."""
        if self._done is None:
            result = lib.smd_request_wait_timeout(self.handle, 0 if self.p2p else timeout_ms)
            if result != _IN_PROGRESS:
                return result, last_error_message() if result != _SUCCESS else ""
            if not self.p2p or timeout_ms == 0:
                return None
            self._start_waiter()
        assert self._done is not None
        return self._outcome if self._done.wait(timeout_ms / 1000) else None

    def test(self) -> Optional[Outcome]:
        """Like poll(0), through smd_request_test (which drives progress)."""
        if self._done is not None:
            return self._outcome if self._done.is_set() else None
        done = ffi.new("int *")
        result = lib.smd_request_test(self.handle, done)
        if done[0]:
            return result, last_error_message() if result != _SUCCESS else ""
        if result != _SUCCESS:  # the request itself is unusable
            raise error_for(result, last_error_message())
        return None

    def settle(self) -> Outcome:
        """Wait until finished (in slices) and return the outcome."""
        outcome = self.poll(SLICE_MS)
        while outcome is None:
            outcome = self.poll(SLICE_MS)
        return outcome

    def count(self) -> Optional[int]:
        """Elements moved by the finished operation."""
        count = ffi.new("size_t *")
        return count[0] if lib.smd_request_get_count(self.handle, count) == _SUCCESS else None

    def status(self) -> Optional[Status]:
        """The finished operation's status (smd_request_get_status)."""
        st = ffi.new("smd_status_t *")
        lib.smd_status_init(st)
        if lib.smd_request_get_status(self.handle, st) != _SUCCESS:
            return None
        return Status(st.source, st.tag, st.count, st.bytes)

    def free(self) -> None:
        lib.smd_request_free(self.handle)


def run_to_completion(completion: Completion, comm: "RequestOwner") -> Outcome:
    """Wait for a request the caller is blocked on (a blocking call). Ctrl-C
    aborts the communicator first: a half-done operation cannot be cancelled
    alone, and the abort ends it now, so its buffers are released before
    KeyboardInterrupt propagates."""
    try:
        return completion.settle()
    except KeyboardInterrupt:
        comm.abort()
        completion.settle()
        raise


def settle_all(*comms: "RequestOwner") -> None:
    """Wait for every unfreed request of the communicators (before they are
    destroyed: the library would wait without a way to interrupt it). Ctrl-C
    aborts them, which ends the wait promptly."""
    try:
        for comm in comms:
            for completion in list(comm._pending):
                completion.settle()
    except KeyboardInterrupt:
        for comm in comms:
            comm.abort()
        for comm in comms:
            for completion in list(comm._pending):
                completion.settle()
        raise


def _release(completion: Completion, comm: "RequestOwner", keep: Tuple[Any, ...]) -> None:
    """Free a request nobody waited for (garbage-collected, or at exit). Its
    buffers (`keep`, held until here) are in use until it finishes, so it is
    waited for first, and Ctrl-C aborts its communicator to end that wait."""
    try:
        run_to_completion(completion, comm)
    finally:
        comm._pending.discard(completion)
        completion.free()


class Request:
    """A nonblocking operation in flight, returned by the ``i*`` methods of
    :class:`smd.Comm`.

    ``wait()`` returns what the blocking form returns (the result array,
    the received count, or None). The buffers involved are kept alive by the
    request and must not be touched until it has finished. A request that is
    garbage-collected (or alive at exit) unfinished is waited for, then
    freed. A Request is not meant to be used by several threads at once.
    """

    __slots__ = ("_completion", "_comm", "_result", "_returns_count", "_error", "_count",
                 "_status", "_finalizer", "__weakref__")

    def __init__(self, handle: Any, comm: "RequestOwner", keep: Tuple[Any, ...], result: Any = None, *,
                 p2p: bool = False, returns_count: bool = False) -> None:
        completion = Completion(handle, p2p)
        self._completion: Optional[Completion] = completion
        self._comm = comm
        self._result = result
        self._returns_count = returns_count
        self._error: Optional[Outcome] = None
        self._count: Optional[int] = None
        self._status: Optional[Status] = None
        # The finalizer holds the buffers, so they outlive the operation
        # even when this object goes first.
        self._finalizer = weakref.finalize(self, _release, completion, comm, keep)
        comm._pending.add(completion)

    def __repr__(self) -> str:
        state = "pending" if self._completion is not None else "failed" if self._error else "done"
        return f"<smd.Request {state} on {self._comm!r}>"

    def _finish(self, outcome: Outcome) -> None:
        """Record the operation's outcome and free the C request."""
        completion = self._completion
        assert completion is not None
        if completion.p2p:  # a truncated receive still names its message
            self._status = completion.status()
        if outcome[0] != _SUCCESS:
            self._error = outcome
        elif completion.p2p:
            self._count = completion.count()
        self._completion = None
        self._comm._pending.discard(completion)
        self._finalizer.detach()  # drops the buffers
        completion.free()  # finished: returns at once

    def _outcome(self) -> Any:
        if self._error is not None:
            raise error_for(*self._error)
        if self._returns_count:
            return self._count
        return self._result

    @property
    def done(self) -> bool:
        """True once the operation has finished, successfully or not (never
        raises; test() and wait() report the outcome)."""
        if self._completion is None:
            return True
        outcome = self._completion.test()
        if outcome is None:
            return False
        self._finish(outcome)
        return True

    def test(self) -> bool:
        """Drive progress without blocking: False while the operation runs,
        True once it finished; raises its error if it failed."""
        if not self.done:
            return False
        self._outcome()
        return True

    def wait(self, timeout: Optional[float] = None) -> Any:
        """Wait for the operation and return its result: what the blocking
        form of the call returns.

        timeout: seconds to wait at most (None: until it finishes or the
        library's deadline fails it). When it runs out, the built-in
        TimeoutError is raised and the operation keeps running: wait again
        later. (smd.TimeoutError, a subclass, means the operation itself
        failed at the library's deadline.)

        Raises the operation's smd.Error if it failed (again on every call).
        Ctrl-C raises KeyboardInterrupt within a slice; the request stays
        valid (unlike an interrupted blocking call, nothing is aborted).
        """
        completion = self._completion
        if completion is not None:
            if timeout is None:
                self._finish(completion.settle())
            else:
                deadline = time.monotonic() + timeout
                while True:
                    left_ms = int((deadline - time.monotonic()) * 1000)
                    outcome = completion.poll(max(0, min(SLICE_MS, left_ms)))
                    if outcome is not None:
                        self._finish(outcome)
                        break
                    if left_ms <= 0:
                        raise builtins.TimeoutError(
                            f"{self!r} has not finished after {timeout} s (it keeps running)")
        return self._outcome()

    @property
    def count(self) -> int:
        """Elements received by a finished receive (sent, by a send)."""
        if self._completion is not None:
            raise InvalidUsageError("the operation has not finished yet: wait() first")
        self._outcome()
        if self._count is None:
            raise InvalidUsageError("count is known for point-to-point requests only")
        return self._count

    @property
    def status(self) -> Status:
        """The status of a finished point-to-point request: for a receive,
        the sender (what ``source=ANY_SOURCE`` left open), tag and size of
        the message it took. Known after a failure too (a TruncatedError
        names the message that did not fit)."""
        if self._completion is not None:
            raise InvalidUsageError("the operation has not finished yet: wait() first")
        if self._status is None:
            raise InvalidUsageError("status is known for point-to-point requests only")
        return self._status


def call_interruptibly(fn: Callable[..., int], *args: Any,
                       on_interrupt: Optional[Callable[[], None]] = None,
                       on_abandoned: Optional[Callable[[], None]] = None) -> None:
    """Run a blocking smd call that has no nonblocking form on a helper
    thread and wait for it in slices, so Ctrl-C is delivered. Raises its
    error (message read on the helper thread, where it was set).

    On KeyboardInterrupt: on_interrupt() runs (e.g. abort the parent
    communicator, which makes the call return promptly) and the call is
    waited for; without on_interrupt the call is left to finish on its own.
    Either way, if the call succeeded after all, on_abandoned() runs (e.g.
    destroy what it created), and KeyboardInterrupt is re-raised.
    """
    outcome: dict = {"result": int(Result.ERR_INTERNAL), "message": "the call raised"}
    finished = threading.Event()
    lock = threading.Lock()  # exactly one of the two threads sees the call orphaned
    abandoned = False

    def run() -> None:
        orphaned = False
        try:
            result = fn(*args)
            outcome["result"] = result
            outcome["message"] = last_error_message() if result != _SUCCESS else ""
        finally:
            with lock:
                finished.set()
                orphaned = abandoned
        if orphaned and outcome["result"] == _SUCCESS and on_abandoned is not None:
            on_abandoned()

    thread = threading.Thread(target=run, name=f"smd-{getattr(fn, '__name__', 'call')}", daemon=True)
    thread.start()
    try:
        while not finished.wait(SLICE_MS / 1000):
            pass
    except KeyboardInterrupt:
        if on_interrupt is not None:
            on_interrupt()
            finished.wait()
            if outcome["result"] == _SUCCESS and on_abandoned is not None:
                on_abandoned()
        else:
            with lock:
                abandoned = True
                orphaned = finished.is_set()
            if orphaned and outcome["result"] == _SUCCESS and on_abandoned is not None:
                on_abandoned()
        raise
    if outcome["result"] != _SUCCESS:
        raise error_for(outcome["result"], outcome["message"])


def waitall(requests: Sequence[Request]) -> List[Any]:
    """Wait for every request (in any order of completion) and return their
    results in the order given, what each ``wait()`` returns. If any
    failed, every request is still waited for, then the first failure (in
    the order given) is raised."""
    results: List[Any] = []
    failure: Optional[BaseException] = None
    for request in requests:
        try:
            results.append(request.wait())
        except Error as e:
            results.append(None)
            failure = failure or e
    if failure is not None:
        raise failure
    return results


def waitany(requests: Sequence[Request]) -> Tuple[int, Any]:
    """Wait until one of the requests has finished; return its index and
    result (what its ``wait()`` returns; raises its error if it failed).
    Requests finished earlier count: call it with the ones still pending."""
    if not requests:
        raise InvalidArgumentError("waitany: no requests")
    while True:
        for index, request in enumerate(requests):
            if request.done:
                return index, request.wait()
        # Nothing yet: give the waiters a moment (a slice caps Ctrl-C's delay).
        pending = next(r for r in requests if r._completion is not None)
        outcome = pending._completion.poll(1)
        if outcome is not None:
            pending._finish(outcome)
