"""torch.distributed.run as the command line runs it, with a workaround for
torch 1.13 under Python 3.11, whose agent fails before it starts a worker
(its Std enum parses "0" as None: "'NoneType' object has no attribute
'get'" in to_map). Usage: torchrun.py [torchrun's arguments]."""

import sys

import torch.distributed.elastic.multiprocessing as multiprocessing
from torch.distributed.elastic.multiprocessing import api
from torch.distributed.run import main

original_to_map = api.to_map


def to_map(val_or_map, local_world_size):
    return original_to_map(api.Std.NONE if val_or_map is None else val_or_map, local_world_size)


api.to_map = multiprocessing.to_map = to_map

if __name__ == "__main__":
    main(sys.argv[1:])
