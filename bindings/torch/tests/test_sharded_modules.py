"""ShardedDataParallel trains any module: nn.TransformerEncoderLayer (and
the nn.MultiheadAttention inside, whose packed in_proj_weight is sliced),
embeddings, tied weights, modules whose forward saves views of a parameter
for the backward. Results equal DDP's; between steps each rank's module
parameters hold no memory but the persistent ones; the defaults say when
they shard nothing."""

import warnings

import pytest
import torch
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

import smd
from smd.torch import ShardedDataParallel
from conftest import assert_same, resident_elements
from gpt import DIM, batches, gpt, train

# Biases and LayerNorm parameters stay whole, the matrices are sharded.
PERSISTENCE = 4 * DIM + 1


def ddp_run(world, rank, steps, make):
    net = DDP(make(), process_group=world)
    return train(net, net.parameters(), rank, steps), net.module.state_dict()


def test_gpt_equals_ddp(world, rank, size):
    """Embeddings, causal TransformerEncoderLayers and a tied output
    projection, sharded: DDP's losses and parameters; between steps the
    module holds only its persistent parameters and each rank owns about
    1/size of the others."""
    steps = 6
    sdp = ShardedDataParallel(gpt(), param_persistence_threshold=PERSISTENCE)
    counts = [p.numel() for p in gpt().parameters()]  # the tied weight once
    persistent = sum(c for c in counts if c < PERSISTENCE)
    sharded = sum(counts) - persistent
    assert resident_elements(sdp.module) == persistent
    losses = train(sdp, sdp.parameters(), rank, steps)
    assert resident_elements(sdp.module) == persistent
    assert sdp.stats()["gathered_elements"] == 0
    assert_same((losses, sdp.state_dict()), ddp_run(world, rank, steps, gpt))
    owned = sum(p.numel() for p in sdp.parameters())
    matrices = sum(1 for c in counts if c >= PERSISTENCE)
    assert sharded / size + persistent <= owned <= sharded / size + persistent + matrices
    # A TransformerEncoderLayer is gathered whole, one at a time (the
    # embeddings, whose inputs need no gradient, are held through the
    # backward until it ends).
    layer = sum(p.numel() for p in sdp.module.layers[0].parameters() if p.numel() >= PERSISTENCE)
    embeddings = sdp.module.embed.weight.numel() + sdp.module.pos.weight.numel()
    assert 0 < sdp.stats()["peak_gathered_elements"] <= layer + embeddings


def test_gpt_inference_fast_path(world, rank):
    """In eval mode without grad the encoder layers take torch's fused
    fast path, which reads the attention's weights without calling its
    forward: the layer is one unit, gathered whole, so outputs match."""
    sdp = ShardedDataParallel(gpt(), param_persistence_threshold=0)
    sdp.eval()
    reference = gpt().eval()
    x, _ = next(batches(rank, 1))
    with torch.no_grad():
        torch.testing.assert_close(sdp(x), reference(x), rtol=1e-5, atol=1e-5)
    assert resident_elements(sdp.module) == 0


class SlicedWeight(nn.Module):
    """Its forward keeps views of its parameter for backward: two halves of
    one packed weight (as MultiheadAttention's in_proj does) and a
    transposed copy-free view."""

    def __init__(self, dim):
        super().__init__()
        self.packed = nn.Parameter(torch.randn(2 * dim, dim) / dim ** 0.5)

    def forward(self, x):
        first, second = self.packed[: x.shape[-1]], self.packed[x.shape[-1]:]
        return torch.tanh(x @ first.t()) * (x @ second.t())


class Views(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(64, DIM)
        self.mix = SlicedWeight(DIM)
        self.attn = nn.MultiheadAttention(DIM, 4, batch_first=True)
        self.head = nn.Linear(DIM, 64)

    def forward(self, tokens):
        h = self.mix(self.embed(tokens))
        h = h + self.attn(h, h, h, need_weights=False)[0]
        return self.head(h)


def views():
    torch.manual_seed(11)
    return Views()


def test_saved_views_stay_valid(world, rank):
    """Parameters freed after the forward and gathered again in place
    before the backward: the views the backward saved (slices, transposes,
    MultiheadAttention's in_proj pieces) read the right values."""
    steps = 5
    sdp = ShardedDataParallel(views(), param_persistence_threshold=0)
    losses = train(sdp, sdp.parameters(), rank, steps)
    assert_same((losses, sdp.state_dict()), ddp_run(world, rank, steps, views))


def test_large_encoder_layer_with_defaults(world, size):
    """nn.TransformerEncoderLayer(d_model=1024) with the default threshold
    (1e6): its two 2M- and 3M-element matrices are sharded, nothing is
    refused, no warning."""
    torch.manual_seed(3)
    layer = nn.TransformerEncoderLayer(d_model=1024, nhead=8, dim_feedforward=1024,
                                       dropout=0.0, batch_first=True)
    small = sum(p.numel() for p in layer.parameters() if p.numel() < 1e6)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sdp = ShardedDataParallel(layer)
    assert resident_elements(sdp.module) == small  # in_proj_weight, linear1/2 sharded
    out = sdp(torch.randn(1, 2, 1024))
    out.sum().backward()
    assert all(p.grad is not None for p in sdp.parameters())


def test_warns_once_when_nothing_is_sharded(world, rank):
    """A model below the default threshold: sharded nothing, and rank 0 is
    told so once, with the numbers; a threshold that shards says nothing."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sdp = ShardedDataParallel(gpt(1))
        train(sdp, sdp.parameters(), rank, 2)
    mine = [w for w in caught if "shards nothing" in str(w.message)]
    if rank == 0:
        assert len(mine) == 1, [str(w.message) for w in caught]
        text = str(mine[0].message)
        assert "param_persistence_threshold=1000000" in text, text
        assert f"the largest {4 * DIM * DIM}" in text, text  # linear1
    else:
        assert not mine
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ShardedDataParallel(gpt(1), param_persistence_threshold=PERSISTENCE)
    assert not [w for w in caught if "shards nothing" in str(w.message)]


def test_max_live_bounds_a_unit(world):
    """A unit larger than max_live_parameters is refused on every rank with
    the numbers, not gathered past the bound."""
    sdp = ShardedDataParallel(gpt(1), param_persistence_threshold=PERSISTENCE,
                              max_live_parameters=1000)
    x, _ = next(batches(0, 1))
    with pytest.raises(smd.NoMemoryError, match="max_live_parameters=1000"):
        sdp(x)
    with pytest.raises(smd.InvalidArgumentError, match="units"):
        ShardedDataParallel(gpt(1), units=["Linear"])
