"""torch's env:// variables from whatever launcher smd understands.

torch's ``init_process_group`` (env://, its default) needs RANK, WORLD_SIZE,
MASTER_ADDR and MASTER_PORT: torchrun and smdrun set them, but mpirun
(SageMaker's launcher for SMDDP jobs) and srun do not, so a plain
``init_process_group("smd")`` failed there with torch's "environment variable
RANK expected, but not set". smd itself reads Open MPI's and Slurm's
variables: :func:`fill` forms a short-lived smd world through them (smd's own
rendezvous), where rank 0 picks the address and a free port for torch's store
and hands them to every rank, then sets the missing variables (LOCAL_RANK and
LOCAL_WORLD_SIZE too) and destroys that world.

smd.torch calls it from ``init_process_group`` for the backends it registered
("smd", "smddp", "cpu:smd", ...) when the init method is env:// and RANK or
WORLD_SIZE is missing; variables already set are kept.
"""

from __future__ import annotations

import os
import socket
from typing import Dict

TORCH_VARS = ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")

# Launchers whose variables smd reads (src/core/bootstrap/launcher_env.cc):
# one of these names per launcher is enough to say it started us.
_LAUNCHER_MARKS = ("OMPI_COMM_WORLD_RANK", "SLURM_PROCID", "SMD_RANK", "PMI_RANK")


def missing() -> bool:
    """True when torch's env:// would lack RANK or WORLD_SIZE."""
    return not (os.environ.get("RANK") and os.environ.get("WORLD_SIZE"))


def launched() -> bool:
    """True when a launcher smd understands (besides torchrun) started us."""
    return any(os.environ.get(name) for name in _LAUNCHER_MARKS)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("", 0))
        return s.getsockname()[1]


def _my_address() -> str:
    """This host's name when it resolves, else its address toward the
    outside (the store must be reachable from the other nodes)."""
    host = socket.gethostname()
    try:
        socket.getaddrinfo(host, None)
        return host
    except OSError:
        return "127.0.0.1"


def fill() -> Dict[str, str]:
    """Sets the missing torch variables from an smd world formed through
    the launcher's environment; returns the ones it set."""
    import numpy as np

    import smd

    world = smd.init()
    try:
        info = world.rank_info()
        found = {
            "RANK": str(world.rank),
            "WORLD_SIZE": str(world.size),
            "LOCAL_RANK": str(info.local_rank),
            "LOCAL_WORLD_SIZE": str(info.local_size),
        }
        # Rank 0's choice of store address, unless the job set one.
        where = np.zeros(264, np.uint8)
        if world.rank == 0:
            addr = os.environ.get("MASTER_ADDR") or _my_address()
            port = os.environ.get("MASTER_PORT") or str(_free_port())
            text = f"{addr}:{port}".encode()
            if len(text) > where.size:
                raise ValueError(f"smd.torch: store address too long: {text!r}")
            where[:len(text)] = np.frombuffer(text, np.uint8)
        world.broadcast(where, root=0)
        addr, _, port = bytes(where).rstrip(b"\0").decode().rpartition(":")
        found["MASTER_ADDR"] = addr
        found["MASTER_PORT"] = port
    finally:
        world.destroy()
    set_now = {}
    for name, value in found.items():
        if not os.environ.get(name):
            os.environ[name] = value
            set_now[name] = value
    return set_now
