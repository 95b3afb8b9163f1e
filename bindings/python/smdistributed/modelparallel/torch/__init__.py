"""``import smdistributed.modelparallel.torch as smp``: SMP's rank and
process-group API over smd (:mod:`smd.smp`); the rest of SMP raises
NotImplementedError naming it."""

from smd.smp import *  # noqa: F401,F403
from smd.smp import __getattr__  # noqa: F401  (names SMP's unimplemented parts)
