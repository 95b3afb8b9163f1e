"""DistributedDataParallel over smd equals DDP over gloo: the same model,
data and steps give the same losses and parameters. The example
(examples/torch/train_ddp.py) is the longer version, run as its own job in
test_jobs.py."""

import torch
import torch.distributed as dist
from torch import nn
from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
from torch.nn.parallel import DistributedDataParallel as DDP


def model():
    torch.manual_seed(3)
    return nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(),
                         nn.Linear(64, 4))


def train(group, rank, steps=8, hook=None, accumulate=1, bucket_cap_mb=25):
    net = DDP(model(), process_group=group, bucket_cap_mb=bucket_cap_mb)
    if hook:
        net.register_comm_hook(group, hook)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    gen = torch.Generator().manual_seed(100 + rank)
    losses = []
    for step in range(steps):
        x, y = torch.randn(8, 16, generator=gen), torch.randn(8, 4, generator=gen)
        if (step + 1) % accumulate:
            with net.no_sync():  # gradients accumulate locally, no allreduce
                nn.functional.mse_loss(net(x), y).backward()
            continue
        loss = nn.functional.mse_loss(net(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad()
        losses.append(loss.item())
    return losses, [p.detach().clone() for p in net.parameters()]


def assert_same(a, b, rtol=1e-6):
    (la, pa), (lb, pb) = a, b
    assert la == lb or all(abs(x - y) <= rtol * max(1, abs(y)) for x, y in zip(la, lb))
    for p, q in zip(pa, pb):
        torch.testing.assert_close(p, q, rtol=rtol, atol=rtol / 10)


def test_ddp_equals_gloo(world, gloo, rank):
    assert_same(train(world, rank), train(gloo, rank))


def test_ddp_small_buckets(world, gloo, rank):
    """Many buckets: many allreduces in flight during one backward pass."""
    assert_same(train(world, rank, bucket_cap_mb=0.001), train(gloo, rank, bucket_cap_mb=0.001))


def test_ddp_comm_hooks(world, gloo, rank):
    """Hooks chain work on the Future of the backend's Work."""
    hook = default_hooks.allreduce_hook
    assert_same(train(world, rank, hook=hook), train(gloo, rank, hook=hook))
    # float16 gradients: smd sums them in float32 and rounds once, gloo
    # rounds after every addition, so the two differ by float16 rounding.
    hook = default_hooks.fp16_compress_hook
    assert_same(train(world, rank, hook=hook), train(gloo, rank, hook=hook), rtol=2e-3)


def test_ddp_no_sync(world, gloo, rank):
    assert_same(train(world, rank, accumulate=2), train(gloo, rank, accumulate=2))


def test_ddp_parameters_start_equal(world, rank):
    """DDP broadcasts rank 0's parameters to every rank when it wraps."""
    torch.manual_seed(rank)  # different on each rank ...
    net = DDP(nn.Linear(5, 5), process_group=world)
    first = [p.detach().clone() for p in net.parameters()]
    everyone = [[torch.zeros_like(p) for _ in range(dist.get_world_size())] for p in first]
    for p, out in zip(first, everyone):
        dist.all_gather(out, p)
        assert all(torch.equal(o, out[0]) for o in out)  # ... the same after wrapping


def test_ddp_fusion_hook(world, gloo, rank):
    """smd's own hook (smd.torch.comm_hooks.fusion_hook: each bucket's
    gradients as one smd group, fused) averages like gloo's default."""
    from smd.torch.comm_hooks import fusion_hook
    assert_same(train(world, rank, hook=fusion_hook), train(gloo, rank))
    assert_same(train(world, rank, hook=fusion_hook, bucket_cap_mb=0.001),
                train(gloo, rank, bucket_cap_mb=0.001))


class SparseEmbeddingNet(nn.Module):
    """A recommendation-style model: sparse embedding gradients (DDP
    allreduces each as a sparse tensor) beside dense ones."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(5)
        self.embedding = nn.EmbeddingBag(100, 8, mode="sum", sparse=True)
        self.head = nn.Linear(8, 2)

    def forward(self, ids):
        return self.head(self.embedding(ids))


def train_sparse(group, rank, steps=5):
    net = DDP(SparseEmbeddingNet(), process_group=group)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    gen = torch.Generator().manual_seed(200 + rank)
    losses = []
    for _ in range(steps):
        ids = torch.randint(0, 100, (6, 4), generator=gen)
        loss = nn.functional.mse_loss(net(ids), torch.randn(6, 2, generator=gen))
        loss.backward()
        opt.step()
        opt.zero_grad()
        losses.append(loss.item())
    return losses, [p.detach().clone() for p in net.parameters()]


def test_ddp_sparse_embedding_gradients(world, gloo, rank):
    assert_same(train_sparse(world, rank), train_sparse(gloo, rank))
