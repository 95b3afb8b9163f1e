"""smd.torch.elastic: torch.distributed that goes on after a lost rank and
takes in new processes (docs/ELASTIC.md, torch).

::

    import torch.distributed as dist
    from smd.torch import elastic

    job = elastic.init()                  # smd's control world + dist's default group "smd"
    try:
        dist.all_reduce(grad)
    except smd.torch.errors.Error:        # PeerFailureError, RevokedError, ...
        job.shrink()                      # the default group is rebuilt over the survivors
    ...
    job.grow(1)                           # members; a new process calls elastic.join()

The decisions (who failed, who joins, the new ranks) are smd's
(``Comm.revoke``/``shrink``/``grow``, ``smd.join``) on a control
communicator of its own, which uses the store only for them. After each,
torch's default process group is destroyed and formed again with backend
"smd" over the new ranks, through a fresh key prefix of one torch TCPStore
the first world's rank 0 serves (as smd's store: its loss is not
survivable). A process the members start as a replacement finds both
stores through the environment it inherits (SMD_MASTER_ADDR,
SMD_MASTER_PORT, SMD_JOB_TOKEN, SMD_TORCH_ELASTIC_STORE). Groups made with
``dist.new_group`` on the old default group must be made again.
"""

from __future__ import annotations

import os
import socket
from datetime import timedelta
from typing import Optional

import numpy as np
import torch.distributed as dist

import smd

from . import BACKEND

#: Where a replacement finds the torch store ("host:port").
STORE_VARIABLE = "SMD_TORCH_ELASTIC_STORE"


class Elastic:
    """The control communicator and the torch store of an elastic job."""

    def __init__(self, control: smd.Comm, store: "dist.Store", timeout: timedelta):
        self.control = control
        self.store = store
        self.timeout = timeout
        self.generation = -1
        self._first = control
        self._rebuild()

    @property
    def rank(self) -> int:
        return self.control.rank

    @property
    def size(self) -> int:
        return self.control.size

    def shrink(self) -> list:
        """Collective over the survivors (after a call on the default group
        failed): revoke and shrink the control communicator, form the
        default group again over the survivors. Returns the old-to-new rank
        map (-1 for a failed rank)."""
        self.control.revoke()
        shrunk, old_to_new = self.control.shrink()
        self._adopt(shrunk)
        return old_to_new

    def grow(self, n_new: int, timeout: Optional[float] = None) -> None:
        """Collective over every member: admit n_new processes that call
        :func:`join` and form the default group again over all (members
        keep their ranks, joiners follow)."""
        self._adopt(self.control.grow(n_new, timeout))

    def destroy(self) -> None:
        """Destroy the default group and the control communicators."""
        if dist.is_initialized():
            dist.destroy_process_group()
        if self.control is not self._first:
            self.control.destroy()
        self._first.destroy()

    def _adopt(self, new: smd.Comm) -> None:
        old, self.control = self.control, new
        if old is not self._first:
            old.destroy()
        self._rebuild()

    def _rebuild(self) -> None:
        # The generation names the new group's keys: the highest any
        # member has seen plus one (a joiner has seen none).
        mine = np.array([self.generation], np.int64)
        self.generation = int(self.control.allreduce(mine, op="max")[0]) + 1
        if dist.is_initialized():
            try:
                dist.destroy_process_group()
            except Exception:  # noqa: BLE001 - a group with a dead member may not go quietly
                pass
        store = dist.PrefixStore(f"smd-elastic/{self.generation}/", self.store)
        dist.init_process_group(BACKEND, store=store, rank=self.control.rank,
                                world_size=self.control.size, timeout=self.timeout)


def _store(addr: str, port: int, master: bool, timeout: timedelta) -> "dist.Store":
    return dist.TCPStore(addr, port, is_master=master, wait_for_workers=False, timeout=timeout)


def init(timeout: Optional[timedelta] = None) -> Elastic:
    """Collective over the job's ranks (smd's launcher environment, as
    ``smd.init()``): forms the control communicator, the torch store (rank
    0 serves it on a free port; SMD_TORCH_ELASTIC_STORE names it for
    processes started later) and the default process group "smd"."""
    timeout = timeout or timedelta(seconds=float(os.environ.get("SMD_TIMEOUT", "300")))
    control = smd.init()
    where = np.zeros(264, np.uint8)
    if control.rank == 0:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.bind(("", 0))
            port = s.getsockname()[1]
        addr = os.environ.get("SMD_MASTER_ADDR") or "127.0.0.1"
        text = f"{addr}:{port}".encode()
        where[:len(text)] = np.frombuffer(text, np.uint8)
        store = _store(addr, port, True, timeout)
    control.broadcast(where, root=0)
    os.environ[STORE_VARIABLE] = bytes(where).rstrip(b"\0").decode()
    if control.rank != 0:
        addr, _, port = os.environ[STORE_VARIABLE].rpartition(":")
        store = _store(addr, int(port), False, timeout)
    return Elastic(control, store, timeout)


def join(timeout: Optional[timedelta] = None) -> Elastic:
    """A new process joins the members' :meth:`Elastic.grow`: smd's store
    and token from SMD_MASTER_ADDR, SMD_MASTER_PORT and SMD_JOB_TOKEN, the
    torch store from SMD_TORCH_ELASTIC_STORE. Returns when the default
    group is formed over everyone."""
    timeout = timeout or timedelta(seconds=float(os.environ.get("SMD_TIMEOUT", "300")))
    where = os.environ.get(STORE_VARIABLE)
    if not where:
        raise smd.InvalidArgumentError(f"smd.torch.elastic.join: {STORE_VARIABLE} is not set (the "
                                       "members' init() sets it; start the joiner from a member "
                                       "or pass it on)")
    control = smd.join(timeout=timeout.total_seconds())
    addr, _, port = where.rpartition(":")
    return Elastic(control, _store(addr, int(port), False, timeout), timeout)
