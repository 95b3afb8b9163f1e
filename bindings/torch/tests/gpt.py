"""A small GPT-style model built only from standard torch modules:
token and position embeddings, causal nn.TransformerEncoderLayer blocks
(nn.MultiheadAttention with its packed in_proj_weight inside), a final
LayerNorm and an output projection tied to the token embedding. The
sharding tests (ShardedDataParallel, FSDP, FSDP2) train it."""

import torch
from torch import nn

VOCAB, DIM, HEADS, SEQ, BATCH = 64, 32, 4, 8, 4


class TinyGPT(nn.Module):
    def __init__(self, layers=2, dim=DIM, heads=HEADS, vocab=VOCAB, seq=SEQ):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.pos = nn.Embedding(seq, dim)
        # dropout 0: the runs compared must compute the same thing.
        self.layers = nn.ModuleList(
            nn.TransformerEncoderLayer(dim, heads, 4 * dim, dropout=0.0, batch_first=True)
            for _ in range(layers))
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab, bias=False)
        self.head.weight = self.embed.weight  # tied

    def forward(self, tokens):
        t = tokens.shape[1]
        x = self.embed(tokens) + self.pos(torch.arange(t))
        mask = torch.full((t, t), float("-inf")).triu(1)
        for layer in self.layers:
            x = layer(x, src_mask=mask)
        return self.head(self.norm(x))


def gpt(layers=2, seed=7, **kwargs):
    """The same initial values on every rank and in every run."""
    torch.manual_seed(seed)
    return TinyGPT(layers, **kwargs)


def batches(rank, steps, vocab=VOCAB, seq=SEQ, batch=BATCH):
    """Each rank's own token batches (inputs, next-token targets)."""
    gen = torch.Generator().manual_seed(1000 + rank)
    for _ in range(steps):
        tokens = torch.randint(0, vocab, (batch, seq + 1), generator=gen)
        yield tokens[:, :-1], tokens[:, 1:]


def loss_of(logits, targets):
    return nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                                       targets.reshape(-1))


def train(net, params, rank, steps):
    """SGD over `params` on this rank's batches; the losses."""
    opt = torch.optim.SGD(params, lr=0.1)
    losses = []
    for x, y in batches(rank, steps):
        loss = loss_of(net(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad()
        losses.append(loss.item())
    return losses
