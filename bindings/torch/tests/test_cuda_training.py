"""DDP, FSDP and FSDP2 on CUDA over smd equal training on the CPU: the same
model and data, every rank's batch concatenated into one batch in one
process on the CPU, give the same parameters after the same steps (equal
batches per rank: the average of the ranks' gradients is the gradient of
the whole batch's mean loss). On one GPU the ranks share it.

Skips without a GPU, as test_cuda.py (its `dev` fixture, conftest.py);
runs in suite torch-cuda (scripts/device_check.sh's torch-cuda stage)."""

import pytest
import torch
import torch.distributed as dist
from torch import nn

pytestmark = pytest.mark.skipif(
    not torch.cuda.is_available(),
    reason="no CUDA device: torch.cuda.is_available() is False (run on a GPU machine: "
    "scripts/device_check.sh run, stage torch-cuda)")

STEPS, BATCH = 4, 8
# CUDA's float32 kernels sum in another order than the CPU's (TF32 off).
RTOL, ATOL = 1e-4, 1e-5


def model():
    torch.manual_seed(3)
    return nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(),
                         nn.Linear(64, 4))


def batches(rank):
    gen = torch.Generator().manual_seed(100 + rank)
    return [(torch.randn(BATCH, 16, generator=gen), torch.randn(BATCH, 4, generator=gen))
            for _ in range(STEPS)]


def train(net, data, dev):
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    for x, y in data:
        nn.functional.mse_loss(net(x.to(dev)), y.to(dev)).backward()
        opt.step()
        opt.zero_grad()


@pytest.fixture(scope="module")
def reference(world):
    """The whole batch of every rank, in one process on the CPU."""
    size = dist.get_world_size()
    net = model()
    per_rank = [batches(r) for r in range(size)]
    whole = [(torch.cat([d[s][0] for d in per_rank]), torch.cat([d[s][1] for d in per_rank]))
             for s in range(STEPS)]
    train(net, whole, "cpu")
    return {k: v.detach().clone() for k, v in net.state_dict().items()}


def assert_like(state, reference, label):
    assert state.keys() == reference.keys(), label
    for name, want in reference.items():
        torch.testing.assert_close(state[name].detach().cpu(), want, rtol=RTOL, atol=ATOL,
                                   msg=lambda m, name=name: f"{label}: {name}: {m}")


@pytest.fixture(autouse=True)
def exact_float32():
    saved = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = False
    yield
    torch.backends.cuda.matmul.allow_tf32 = saved


def test_ddp_on_cuda_equals_cpu(dev, world, rank, reference):
    from torch.nn.parallel import DistributedDataParallel as DDP
    net = DDP(model().to(dev), device_ids=[dev.index], process_group=world)
    train(net, batches(rank), dev)
    assert_like(net.module.state_dict(), reference, "DDP on CUDA")


def test_fsdp_on_cuda_equals_cpu(dev, world, rank, reference):
    from torch.distributed.fsdp import FullStateDictConfig, StateDictType
    from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
    net = FSDP(model(), process_group=world, device_id=dev)
    train(net, batches(rank), dev)
    full = FullStateDictConfig(offload_to_cpu=True, rank0_only=False)
    with FSDP.state_dict_type(net, StateDictType.FULL_STATE_DICT, full):
        state = net.state_dict()
    assert_like(state, reference, "FSDP on CUDA")


def test_fsdp2_on_cuda_equals_cpu(dev, world, rank, reference):
    fsdp = pytest.importorskip("torch.distributed.fsdp")
    if not hasattr(fsdp, "fully_shard"):
        pytest.skip(f"torch {torch.__version__} has no fully_shard (FSDP2)")
    from torch.distributed.device_mesh import init_device_mesh
    net = model().to(dev)
    mesh = init_device_mesh("cuda", (dist.get_world_size(),))
    for layer in net:
        if isinstance(layer, nn.Linear):
            fsdp.fully_shard(layer, mesh=mesh)
    fsdp.fully_shard(net, mesh=mesh)
    train(net, batches(rank), dev)
    state = {k: v.full_tensor() for k, v in net.state_dict().items()}
    assert_like(state, reference, "FSDP2 on CUDA")
