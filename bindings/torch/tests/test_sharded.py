"""ShardedDataParallel (smd.torch) trains like DDP: a small transformer
trained with its parameters sharded over the ranks gives the losses and
parameters DDP gives on the same data, while each rank keeps only its
shards (plus the small persistent parameters) and never gathers more than
max_live_parameters elements at once."""

import math
import mmap
import os
import sys
import weakref

import pytest
import torch
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

import smd.torch
from smd.torch import ShardedDataParallel
from conftest import assert_same, resident_elements, resident_pages

HEAVY = os.environ.get("SMD_TEST_HEAVY") == "1"
VOCAB, DIM, HEADS, SEQ, BATCH = 64, 32, 4, 8, 4
# Biases and LayerNorm parameters (DIM or 4*DIM elements) stay whole on
# every rank; the matrices are sharded.
PERSISTENCE = 4 * DIM + 1


class Block(nn.Module):
    """Pre-norm transformer block: causal self-attention and an MLP, with
    separate q/k/v projections."""

    def __init__(self):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(DIM), nn.LayerNorm(DIM)
        self.q, self.k, self.v, self.o = (nn.Linear(DIM, DIM) for _ in range(4))
        self.up, self.down = nn.Linear(DIM, 4 * DIM), nn.Linear(4 * DIM, DIM)

    def forward(self, x):
        b, t, _ = x.shape
        h = self.ln1(x)

        def heads(y):
            return y.view(b, t, HEADS, DIM // HEADS).transpose(1, 2)

        q, k, v = heads(self.q(h)), heads(self.k(h)), heads(self.v(h))
        scores = q @ k.transpose(-1, -2) / math.sqrt(DIM // HEADS)
        mask = torch.ones(t, t, dtype=torch.bool).triu(1)
        attn = scores.masked_fill(mask, float("-inf")).softmax(-1) @ v
        x = x + self.o(attn.transpose(1, 2).reshape(b, t, DIM))
        return x + self.down(torch.nn.functional.gelu(self.up(self.ln2(x))))


class Transformer(nn.Module):
    def __init__(self, layers=2):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, DIM)
        self.blocks = nn.ModuleList(Block() for _ in range(layers))
        self.ln = nn.LayerNorm(DIM)
        self.head = nn.Linear(DIM, VOCAB)

    def forward(self, tokens):
        x = self.embed(tokens)
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln(x))


def model(layers=2):
    torch.manual_seed(7)
    return Transformer(layers)


def batches(rank, steps):
    gen = torch.Generator().manual_seed(1000 + rank)
    for _ in range(steps):
        tokens = torch.randint(0, VOCAB, (BATCH, SEQ + 1), generator=gen)
        yield tokens[:, :-1], tokens[:, 1:]


def train(net, params, rank, steps, clip=None):
    opt = torch.optim.SGD(params, lr=0.1)
    losses = []
    for x, y in batches(rank, steps):
        loss = nn.functional.cross_entropy(net(x).reshape(-1, VOCAB), y.reshape(-1))
        loss.backward()
        if clip is not None and isinstance(net, DDP):
            torch.nn.utils.clip_grad_norm_(net.parameters(), clip)
        opt.step()
        opt.zero_grad()
        losses.append(loss.item())
    return losses


def ddp_reference(world, rank, steps, layers=2, clip=None):
    net = DDP(model(layers), process_group=world)
    losses = train(net, net.parameters(), rank, steps, clip)
    return losses, net.module.state_dict()


def ddp_stack_reference(world, rank, stack, width, steps):
    """DDP's (losses, state) for `steps` steps of a stack() of layers
    `width` wide fed 4 random rows (seeded by rank), squared-mean loss."""
    ref = DDP(stack(), process_group=world)
    opt = torch.optim.SGD(ref.parameters(), lr=0.1)
    gen = torch.Generator().manual_seed(rank)
    losses = []
    for _ in range(steps):
        x = torch.randn(4, width, generator=gen, requires_grad=True)
        loss = ref(x).square().mean()
        loss.backward()
        opt.step()
        opt.zero_grad()
        losses.append(loss.item())
    return losses, ref.module.state_dict()


def sizes(net):
    """(all elements, sharded elements, persistent elements) of a module."""
    counts = [p.numel() for p in net.parameters()]
    persistent = sum(c for c in counts if c < PERSISTENCE)
    return sum(counts), sum(counts) - persistent, persistent


def test_sharded_equals_ddp(world, rank, size):
    """30 steps on every rank's own data: the same losses and parameters as
    DDP, while each rank owns about 1/size of the sharded parameters."""
    steps = 30
    sdp = ShardedDataParallel(model(), param_persistence_threshold=PERSISTENCE)
    total, sharded, persistent = sizes(model())
    # Between steps the module's sharded parameters hold nothing.
    assert resident_elements(sdp.module) == persistent
    losses = train(sdp, sdp.parameters(), rank, steps)
    result = (losses, sdp.state_dict())
    assert_same(result, ddp_reference(world, rank, steps))

    stats = sdp.stats()
    owned = sum(p.numel() for p in sdp.parameters())
    assert owned == stats["owned_elements"] + stats["persistent_elements"]
    assert stats["persistent_elements"] == persistent
    # Shards are equal pieces (the last padded): at most one element of
    # padding per sharded parameter and rank.
    matrices = sum(1 for p in model().parameters() if p.numel() >= PERSISTENCE)
    assert sharded / size + persistent <= owned <= sharded / size + persistent + matrices
    assert stats["owned_bytes"] == 4 * owned
    assert stats["peak_live_elements"] <= total
    if size > 1:
        assert owned < 0.75 * total  # the point of sharding


def test_sharded_max_live_one_layer(world, rank, size):
    """max_live_parameters = one transformer block's sharded elements:
    still DDP's result, and the gathered elements never exceeded it."""
    steps = 30 if HEAVY else 10
    block = sum(p.numel() for p in Block().parameters() if p.numel() >= PERSISTENCE)
    sdp = ShardedDataParallel(model(), param_persistence_threshold=PERSISTENCE,
                              max_live_parameters=block)
    losses = train(sdp, sdp.parameters(), rank, steps)
    result = (losses, sdp.state_dict())
    stats = sdp.stats()
    # Gathered straight into the module's storages (the set's own buffers
    # serve only state_dict(), one parameter at a time).
    assert 0 < stats["peak_gathered_elements"] <= block
    assert stats["peak_live_elements"] <= block
    assert_same(result, ddp_reference(world, rank, steps))


def test_sharded_gradient_clipping(world, rank):
    """gradient_clipping clips the global norm as clip_grad_norm_ does over
    the whole model."""
    steps = 5
    sdp = ShardedDataParallel(model(), param_persistence_threshold=PERSISTENCE,
                              gradient_clipping=0.5)
    losses = train(sdp, sdp.parameters(), rank, steps)
    assert sdp.last_grad_norm is not None and sdp.last_grad_norm > 0.5  # clipping happened
    assert_same((losses, sdp.state_dict()), ddp_reference(world, rank, steps, clip=0.5))


def test_sharded_everything_sharded(world, rank):
    """Threshold 0: biases and LayerNorm parameters are sharded too (a
    parameter of fewer elements than ranks leaves some shards all padding)."""
    steps = 5
    sdp = ShardedDataParallel(model(1), param_persistence_threshold=0)
    assert resident_elements(sdp.module) == 0
    losses = train(sdp, sdp.parameters(), rank, steps)
    assert_same((losses, sdp.state_dict()), ddp_reference(world, rank, steps, layers=1))


def test_sharded_release_heap_trims_after_each_backward(world, rank, monkeypatch):
    """release_heap=True hands the heap's free memory back once per
    backward, after the gradients are reduced; the default never does; the
    results are the same."""
    from smd.torch import sharded_data_parallel as sdp_module
    calls = []
    monkeypatch.setattr(sdp_module, "_MALLOC_TRIM", lambda pad: calls.append(pad))
    steps = 3
    trimmed = ShardedDataParallel(model(1), param_persistence_threshold=PERSISTENCE,
                                  release_heap=True)
    result = train(trimmed, trimmed.parameters(), rank, steps)
    assert calls == [0] * steps
    kept = ShardedDataParallel(model(1), param_persistence_threshold=PERSISTENCE)
    assert train(kept, kept.parameters(), rank, steps) == result
    assert calls == [0] * steps


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="mincore and MADV_DONTNEED "
                    "as Linux has them")
def test_sharded_gathers_into_pages_returned_when_freed(world, rank):
    """Each sharded parameter is gathered into the same memory every time
    (the same address in every forward of every step, not a new heap
    block), resident while the layer computes and handed back to the
    system once it is freed: between steps none of its pages is in
    memory. Still DDP's result."""
    layers, width, steps = 3, 64, 3  # each weight 16 KiB: whole pages

    def stack():
        torch.manual_seed(5)
        return nn.Sequential(*(nn.Linear(width, width) for _ in range(layers)))

    net = stack()
    sdp = ShardedDataParallel(net, param_persistence_threshold=width + 1)
    seen = []  # per forward of a layer, once gathered: (layer, address, resident pages)

    def record(layer):
        def hook(module, inputs):  # after the wrapper's, which gathers
            w = module.weight
            seen.append((layer, w.data_ptr(), resident_pages(w.data_ptr(), w.numel() * 4)))
        return hook

    for i, layer in enumerate(net):
        layer.register_forward_pre_hook(record(i))
    opt = torch.optim.SGD(sdp.parameters(), lr=0.1)
    gen = torch.Generator().manual_seed(rank)
    losses = []
    for _ in range(steps):
        loss = sdp(torch.randn(4, width, generator=gen)).square().mean()
        loss.backward()
        opt.step()
        opt.zero_grad()
        losses.append(loss.item())
        assert resident_elements(sdp.module) == layers * width  # the biases only
        for _, address, _ in seen:
            assert resident_pages(address, width * width * 4) == 0
    assert len(seen) == layers * steps
    full = width * width * 4 // mmap.PAGESIZE
    assert all(pages == full for _, _, pages in seen)
    for i in range(layers):
        assert len({address for layer, address, _ in seen if layer == i}) == 1
    assert len({address for _, address, _ in seen}) == layers

    assert_same((losses, sdp.state_dict()), ddp_stack_reference(world, rank, stack, width, steps))


def test_smp_config_maps_sdp_keys(world, size):
    kwargs = smd.torch.smp_config({"sharded_data_parallel_degree": size,
                                   "sdp_max_live_parameters": 12345,
                                   "sdp_param_persistence_threshold": 7,
                                   "sdp_reduce_bucket_size": 999,
                                   "sdp_hierarchical_allgather": False})
    assert kwargs["max_live_parameters"] == 12345
    assert kwargs["param_persistence_threshold"] == 7
    assert kwargs["reduce_bucket_size"] == 999
    assert kwargs["hierarchical_allgather"] is False
    assert kwargs["gradient_clipping"] == 1.0  # SMP's default sdp_gradient_clipping
    assert kwargs["process_group"].size == size
    with pytest.raises(smd.InvalidArgumentError):
        smd.torch.smp_config({"sharded_data_parallel_degree": 0})


def test_sharded_rejects_bad_input(world):
    with pytest.raises(smd.InvalidArgumentError, match="float32/float64"):
        ShardedDataParallel(nn.Linear(2, 2).half())
    with pytest.raises(smd.InvalidArgumentError, match="gradient_clipping"):
        ShardedDataParallel(nn.Linear(2, 2), gradient_clipping=-1.0)


def test_sharded_starts_from_rank0(world, rank, size):
    """Like DDP, wrapping takes rank 0's values, whatever each rank built."""
    torch.manual_seed(rank)
    sdp = ShardedDataParallel(nn.Sequential(nn.Linear(20, 30), nn.Linear(30, 2)),
                              param_persistence_threshold=40)
    state = sdp.state_dict()
    for name, value in state.items():
        everyone = [torch.zeros_like(value) for _ in range(size)]
        torch.distributed.all_gather(everyone, value)
        assert all(torch.equal(v, everyone[0]) for v in everyone), name


def test_sharded_over_a_process_group(world, rank, size):
    """A torch process group (not the default one) is served by an smd
    communicator of its ranks."""
    group = torch.distributed.new_group(list(range(size)))
    sdp = ShardedDataParallel(model(1), group, param_persistence_threshold=PERSISTENCE)
    assert sdp.sharded_parameters.comm.size == size
    losses = train(sdp, sdp.parameters(), rank, 5)
    assert_same((losses, sdp.state_dict()), ddp_reference(world, rank, 5, layers=1))


def test_smp_config_with_replicas(world, rank, size):
    """sharded_data_parallel_degree below the world size: shard groups of
    that many ranks, replicated; SMP's default clipping (1.0) applies."""
    if size < 4:
        pytest.skip("needs 2 shard groups of 2 ranks")
    kwargs = smd.torch.smp_config({"sharded_data_parallel_degree": 2,
                                   "sdp_param_persistence_threshold": PERSISTENCE})
    assert kwargs["process_group"].size == 2 and kwargs["replica_group"].size == size // 2
    sdp = ShardedDataParallel(model(1), **kwargs)
    losses = train(sdp, sdp.parameters(), rank, 5)
    assert_same((losses, sdp.state_dict()), ddp_reference(world, rank, 5, layers=1, clip=1.0))


def test_sharded_load_state_dict(world, rank):
    """A state saved from one wrapper loads into another (after it ran a
    step: gathered copies of its old values must not be served)."""
    first = ShardedDataParallel(model(1), param_persistence_threshold=PERSISTENCE)
    train(first, first.parameters(), rank, 2)
    saved = first.state_dict()
    second = ShardedDataParallel(model(1), param_persistence_threshold=PERSISTENCE)
    train(second, second.parameters(), rank + 100, 1)
    x, _ = next(batches(rank, 1))
    with torch.no_grad():
        second(x)  # its parameters stay gathered (released, cached)
    second.load_state_dict(saved)
    with torch.no_grad():
        torch.testing.assert_close(second(x), first(x), rtol=0, atol=0)
    loaded = second.state_dict()
    for name in saved:
        torch.testing.assert_close(loaded[name], saved[name], rtol=0, atol=0)
    with pytest.raises(smd.InvalidArgumentError, match="missing keys"):
        second.load_state_dict({})


def test_sharded_reduces_each_unit_during_backward(world, rank):
    """Each layer's gradients are reduced as soon as its backward is done:
    when the backward reaches the input, the last layer's whole gradient is
    gone (no longer referenced by anything), and the whole gradients held
    at once stayed below their sum. Still DDP's result."""
    layers, width = 6, 16

    def stack():
        torch.manual_seed(3)
        return nn.Sequential(*(nn.Linear(width, width) for _ in range(layers)))

    net = stack()
    last = net[-1].weight
    # The accumulator the wrapper hooks too; this hook, registered first,
    # runs first: the whole gradient is there.
    accumulator = last.expand_as(last).grad_fn.next_functions[0][0]
    whole = []
    accumulator.register_hook(lambda *_: whole.append(weakref.ref(last.grad)))
    sdp = ShardedDataParallel(net, param_persistence_threshold=width + 1)
    sharded = layers * width * width
    opt = torch.optim.SGD(sdp.parameters(), lr=0.1)
    gen = torch.Generator().manual_seed(rank)
    losses, gone = [], []
    for _ in range(3):
        x = torch.randn(4, width, generator=gen, requires_grad=True)
        x.register_hook(lambda g: gone.append(last.grad is None and whole[-1]() is None))
        loss = sdp(x).square().mean()
        loss.backward()
        opt.step()
        opt.zero_grad()
        losses.append(loss.item())
    assert gone == [True] * 3
    stats = sdp.stats()
    assert 0 < stats["peak_full_grad_elements"] < sharded
    assert stats["full_grad_elements"] == 0

    assert_same((losses, sdp.state_dict()), ddp_stack_reference(world, rank, stack, width, 3))



def test_sharded_trains_on_after_a_backward_raises(world, rank):
    """A tensor hook that raises half-way through the backward of the
    second step (on every rank alike, as a failing loss or hook does): the
    last layers' reductions were queued, the rest never ran. The next step
    starts clean (nothing of the cut step stays gathered or half-reduced)
    and training goes on exactly as DDP's that skipped that step."""
    layers, width, steps, cut = 4, 16, 5, 1

    def stack():
        torch.manual_seed(5)
        return nn.Sequential(*(nn.Linear(width, width) for _ in range(layers)))

    class Raised(Exception):
        pass

    def raising(grad):
        raise Raised("a hook raised mid-backward")

    def run(net, seq, params, cut_step):
        opt = torch.optim.SGD(params, lr=0.1)
        gen = torch.Generator().manual_seed(rank)
        losses = []
        for step in range(steps):
            x = torch.randn(4, width, generator=gen)
            if step == cut:
                if cut_step:
                    # The output of layer 1: layers 3 and 2 are done when the
                    # backward reaches it.
                    def arm(module, inputs, output):
                        output.register_hook(raising)

                    handle = seq[1].register_forward_hook(arm)
                    with pytest.raises(Raised):
                        net(x).square().mean().backward()
                    handle.remove()
                    opt.zero_grad()
                continue
            loss = net(x).square().mean()
            loss.backward()
            opt.step()
            opt.zero_grad()
            losses.append(loss.item())
        return losses

    seq = stack()
    sdp = ShardedDataParallel(seq, param_persistence_threshold=width + 1)
    losses = run(sdp, seq, sdp.parameters(), True)
    assert sdp.stats()["gathered_elements"] == 0
    assert resident_elements(sdp.module) == layers * width  # the biases only

    ref = DDP(stack(), process_group=world)
    ref_losses = run(ref, ref.module, ref.parameters(), False)
    assert len(losses) == steps - 1
    assert_same((losses, sdp.state_dict()), (ref_losses, ref.module.state_dict()))
