"""send, recv, isend, irecv and batch_isend_irecv between ranks."""

import torch
import torch.distributed as dist

from reference import values


def test_ring(world, pair, rank, size):
    """Each rank sends to the next and receives from the previous, without
    deadlock: the sends are nonblocking."""
    right, left = (rank + 1) % size, (rank - 1) % size
    out = torch.zeros(1000)
    send = dist.isend(values(rank, (1000,), torch.float32), right)
    dist.recv(out, left)
    send.wait()
    assert torch.equal(out, values(left, (1000,), torch.float32))


def test_tags_keep_messages_apart(world, pair, rank):
    """Two messages with different tags are received in the opposite order."""
    if rank == 0:
        a = dist.isend(torch.full((4,), 1.0), 1, tag=11)
        b = dist.isend(torch.full((4,), 2.0), 1, tag=22)
        a.wait()
        b.wait()
    elif rank == 1:
        second, first = torch.zeros(4), torch.zeros(4)
        dist.recv(second, 0, tag=22)
        dist.recv(first, 0, tag=11)
        assert second.tolist() == [2.0] * 4 and first.tolist() == [1.0] * 4
    dist.barrier()


def test_batch_isend_irecv(world, pair, rank, size):
    right, left = (rank + 1) % size, (rank - 1) % size
    got = torch.zeros(64, dtype=torch.int64)
    ops = [dist.P2POp(dist.isend, values(rank, (64,), torch.int64), right),
           dist.P2POp(dist.irecv, got, left)]
    for work in dist.batch_isend_irecv(ops):
        work.wait()
    assert torch.equal(got, values(left, (64,), torch.int64))


def test_large_message(world, pair, rank):
    """8 MiB: more than one eager message of the transport."""
    if rank == 0:
        dist.send(values(0, (1 << 21,), torch.float32), 1)
    elif rank == 1:
        t = torch.zeros(1 << 21)
        dist.recv(t, 0)
        assert torch.equal(t, values(0, (1 << 21,), torch.float32))
    dist.barrier()


def test_irecv_source_rank(world, pair, rank):
    if rank == 1:
        dist.send(torch.ones(2), 0)
    elif rank == 0:
        work = dist.irecv(torch.zeros(2), 1)
        work.wait()
        assert work._source_rank() == 1
    dist.barrier()


def test_recv_from_any_source(world, pair, rank, size):
    """recv(src=None) goes through recvAnysource (SMD_ANY_SOURCE) and returns
    the sender; every other rank's message arrives exactly once."""
    last = size - 1
    if rank != 0:
        dist.send(torch.full((3,), float(rank)), 0, tag=5)
    else:
        senders = []
        for _ in range(size - 1):
            out = torch.zeros(3)
            src = dist.recv(out, tag=5)
            assert torch.equal(out, torch.full((3,), float(src)))
            senders.append(src)
        assert sorted(senders) == list(range(1, size))
    # irecv from any source: its Work names the sender once it completes
    # (torch 2.x refuses a send to oneself, so the last rank sends).
    if size > 1:
        dist.barrier()  # the tag-5 messages are all received
        if rank == last:
            dist.send(torch.ones(1), 0)
        elif rank == 0:
            work = dist.irecv(torch.zeros(1))
            work.wait()
            assert work.source_rank() == last
    dist.barrier()
