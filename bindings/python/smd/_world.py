"""Forming the world: smd.init() and smd.world()."""

from __future__ import annotations

import math
from typing import Any, List, Optional, Tuple

from ._ffi import ffi, lib
from .comm import Comm
from .errors import InvalidArgumentError, InvalidUsageError, check
from .request import call_interruptibly

_world: Optional[Comm] = None


def init(*, rank: Optional[int] = None, size: Optional[int] = None, addr: Optional[str] = None,
         port: Optional[int] = None, token: Optional[str] = None,
         timeout: Optional[float] = None, transport: Optional[str] = None,
         store_prefix: Optional[str] = None) -> Comm:
    """Form the world (collective over every rank of the job) and return it.
    It becomes what :func:`world` returns unless a world formed earlier is
    still alive (so a library can form a private world without taking the
    application's).

    With no arguments everything comes from the launcher's environment
    (smdrun, torchrun, Open MPI, Slurm, SMD_*); with none, a one-rank world.
    Explicit values override the environment:

    rank, size: this process's rank and the number of ranks.
    addr, port: where the TCP store lives (rank 0 serves it). Under
        torchrun (or with torch's MASTER_ADDR/MASTER_PORT) smd serves on
        MASTER_PORT + 1, beside torch's own store.
    token: the secret every rank presents to the store (default
        SMD_JOB_TOKEN, else one rank 0 draws and hands over in a private
        file, see docs/SECURITY.md).
    timeout: seconds, the deadline of every blocking step of this world
        (default SMD_TIMEOUT, 300 s).
    transport: "auto", "shm" or a plugin name.
    store_prefix: a prefix for the store keys (worlds that share a store
        have keys of their own without one).

    Ctrl-C while waiting for the other ranks raises KeyboardInterrupt at
    once (the world, if it still forms, is destroyed when it does).
    Raises BootstrapError, TimeoutError, PluginError, InvalidArgumentError.
    Several worlds may exist in one process (those over one store share its
    connection), and a world may be formed again right after it is
    destroyed, with the same arguments, any number of times.
    """
    strings: List[Any] = []  # the char[] the options point to, alive until init returns
    options = _options(strings, rank=rank, size=size, addr=addr, port=port, token=token,
                       timeout=timeout, transport=transport, store_prefix=store_prefix)
    return _form(lib.smd_comm_init, options)


def _options(strings: List[Any], *, rank: Optional[int] = None, size: Optional[int] = None,
             addr: Optional[str] = None, port: Optional[int] = None, token: Optional[str] = None,
             timeout: Optional[float] = None, transport: Optional[str] = None,
             store_prefix: Optional[str] = None) -> Any:
    """smd_init_options_t from init()'s and join()'s arguments; the strings
    it points to are kept in `strings`."""
    options = ffi.new("smd_init_options_t *")
    check(lib.smd_init_options_init(options))

    def text(value: str) -> Any:
        strings.append(ffi.new("char[]", value.encode()))
        return strings[-1]

    if rank is not None:
        options.rank = rank
    if size is not None:
        options.world_size = size
    if addr is not None:
        options.store_addr = text(addr)
    if port is not None:
        options.store_port = port
    if token is not None:
        options.job_token = text(token)
    if timeout is not None:
        if not timeout > 0:
            raise InvalidArgumentError(f"timeout must be a positive number of seconds, got {timeout!r}")
        options.timeout_ms = max(1, math.ceil(timeout * 1000))
    if transport is not None:
        options.transport = text(transport)
    if store_prefix is not None:
        options.store_prefix = text(store_prefix)
    return options


def join(*, addr: Optional[str] = None, port: Optional[int] = None, token: Optional[str] = None,
         timeout: Optional[float] = None, transport: Optional[str] = None,
         store_prefix: Optional[str] = None) -> Comm:
    """A new process joins a running job: waits for the members' collective
    :meth:`Comm.grow` that admits it and returns the grown communicator
    (members first, joiners after; docs/ELASTIC.md, Grow). The arguments
    name the job's store as for :func:`init` (default: SMD_MASTER_ADDR,
    SMD_MASTER_PORT, SMD_JOB_TOKEN); the token is required. A wrong token
    raises BootstrapError ("job token mismatch") and disturbs nobody;
    TimeoutError when no grow admits this process within `timeout`. The
    communicator becomes what :func:`world` returns when there is none."""
    strings: List[Any] = []
    options = _options(strings, addr=addr, port=port, token=token, timeout=timeout,
                       transport=transport, store_prefix=store_prefix)
    return _form(lib.smd_comm_join, options)


def _form(entry: Any, options: Any) -> Comm:
    """Runs smd_comm_init or smd_comm_join interruptibly; the communicator
    becomes what world() returns when there is none."""
    global _world
    out = ffi.new("smd_comm_t **")
    call_interruptibly(entry, options, out, on_abandoned=lambda: lib.smd_comm_destroy(out[0]))
    comm = Comm(out[0])
    if not is_initialized():
        _world = comm
    return comm


def world() -> Comm:
    """The world :func:`init` formed (InvalidUsageError if there is none, or
    it was destroyed)."""
    if _world is None or _world.destroyed:
        raise InvalidUsageError("no world: call smd.init() first")
    return _world


def is_initialized() -> bool:
    """True when :func:`world` has a live world to return."""
    return _world is not None and not _world.destroyed


def version() -> Tuple[int, int, int]:
    """The library's version (major, minor, patch); it may be newer than
    the header the binding was built from (smd.HEADER_VERSION)."""
    parts = [ffi.new("int *") for _ in range(3)]
    check(lib.smd_get_version(*parts))
    return parts[0][0], parts[1][0], parts[2][0]
