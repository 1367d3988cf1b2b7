"""TinyGPT: one small decoder in which every position scheme of the course can be switched on.

Each scheme is taken from its own module, never re-implemented here:

    "none"        no position information at all (only the causal mask hints at order)
    "learned"     helpers.absolute.LearnedPositionalEmbedding, added to the token vectors
    "sinusoidal"  helpers.absolute.sinusoidal_table, added to the token vectors (unscaled)
    "rope"        helpers.rope.apply_rope on the queries and keys of every layer
    "alibi"       helpers.relative.alibi_bias added to the attention logits of every layer
    "t5"          helpers.relative.T5RelativeBias (causal, 32 buckets, max distance 128), one
                  learned table shared by all layers, added to the logits as in T5
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn
from tqdm.auto import tqdm

from .absolute import LearnedPositionalEmbedding, sinusoidal_table
from .relative import T5RelativeBias, alibi_bias
from .rope import apply_rope, rope_frequencies

__all__ = ["POSITION_SCHEMES", "TinyGPT", "compact_vocabulary", "train_tiny_gpt",
           "evaluate_loss", "random_windows"]

POSITION_SCHEMES = ("none", "learned", "sinusoidal", "rope", "alibi", "t5")


class CausalSelfAttention(nn.Module):
    """Multi-head causal self-attention; RoPE and logit biases enter here when asked for."""

    def __init__(self, d_model: int, n_heads: int):
        super().__init__()
        self.n_heads = n_heads
        self.qkv = nn.Linear(d_model, 3 * d_model, bias=False)
        self.out = nn.Linear(d_model, d_model, bias=False)

    def forward(self, x: torch.Tensor, rope: tuple[torch.Tensor, float] | None = None,
                bias: torch.Tensor | None = None) -> torch.Tensor:
        batch, length, d_model = x.shape
        # [B, T, 3d] -> three tensors [B, heads, T, head_dim]
        q, k, v = self.qkv(x).view(batch, length, 3, self.n_heads, -1).permute(2, 0, 3, 1, 4)
        if rope is not None:
            inv_freq, attention_factor = rope
            # Rotate queries and keys (never values). A scaling method may also ask for an
            # attention factor on cos and sin, which scales every logit by its square.
            q = apply_rope(q, inv_freq=inv_freq) * attention_factor
            k = apply_rope(k, inv_freq=inv_freq) * attention_factor
        if bias is None:
            mixed = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            future = torch.ones(length, length, dtype=torch.bool, device=x.device).triu(1)
            mask = bias.masked_fill(future, float("-inf"))  # [heads, T, T], broadcast on batch
            mixed = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        return self.out(mixed.transpose(1, 2).reshape(batch, length, d_model))


class Block(nn.Module):
    """Pre-LayerNorm transformer block: x + attention(LN(x)), then x + MLP(LN(x))."""

    def __init__(self, d_model: int, n_heads: int):
        super().__init__()
        self.norm1 = nn.LayerNorm(d_model)
        self.attention = CausalSelfAttention(d_model, n_heads)
        self.norm2 = nn.LayerNorm(d_model)
        self.mlp = nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.GELU(),
                                 nn.Linear(4 * d_model, d_model))

    def forward(self, x, rope=None, bias=None):
        x = x + self.attention(self.norm1(x), rope=rope, bias=bias)
        return x + self.mlp(self.norm2(x))


class TinyGPT(nn.Module):
    """A small GPT: ids `[B, T]` -> next-token logits `[B, T, vocab_size]`.

    `position` picks the scheme (see POSITION_SCHEMES). Every scheme accepts T longer than
    `context_length` except "learned", whose table has no rows there and raises ValueError.
    """

    def __init__(self, vocab_size: int, context_length: int, d_model: int = 64, n_heads: int = 4,
                 n_layers: int = 2, position: str = "rope", dropout: float = 0.0):
        super().__init__()
        if position not in POSITION_SCHEMES:
            raise ValueError(f"position must be one of {POSITION_SCHEMES}, got {position!r}")
        for name, value in (("vocab_size", vocab_size), ("context_length", context_length),
                            ("d_model", d_model), ("n_heads", n_heads), ("n_layers", n_layers)):
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ValueError(f"{name} must be a positive integer, got {name}={value!r}")
        if d_model % n_heads:
            raise ValueError(f"d_model={d_model} must be divisible by n_heads={n_heads}")
        head_dim = d_model // n_heads
        if position == "rope" and head_dim % 2:
            raise ValueError(f"RoPE rotates pairs: the head dimension d_model / n_heads = "
                             f"{head_dim} must be even")
        self.position = position
        self.context_length = context_length
        self.n_heads = n_heads
        self.tokens = nn.Embedding(vocab_size, d_model)
        self.dropout = nn.Dropout(dropout)
        if position == "learned":
            self.positions = LearnedPositionalEmbedding(context_length, d_model)
        if position == "t5":
            self.t5_bias = T5RelativeBias(n_heads, num_buckets=32, max_distance=128,
                                          bidirectional=False)
        if position == "rope":
            # A buffer, not a parameter: fixed, saved with the model, replaceable afterwards.
            self.register_buffer("rope_inv_freq", rope_frequencies(head_dim))
            self.rope_attention_factor = 1.0
        self.blocks = nn.ModuleList(Block(d_model, n_heads) for _ in range(n_layers))
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab_size, bias=False)

    def set_rope_frequencies(self, inv_freq: torch.Tensor, attention_factor: float = 1.0) -> None:
        """Swap the RoPE frequencies of a (trained) model, e.g. for a context-extension method."""
        if self.position != "rope":
            raise ValueError(f"this model uses position={self.position!r}, not 'rope'")
        if inv_freq.shape != self.rope_inv_freq.shape:
            raise ValueError(f"inv_freq must have shape {tuple(self.rope_inv_freq.shape)} (one "
                             f"frequency per pair of a head), got {tuple(inv_freq.shape)}")
        self.rope_inv_freq = inv_freq.to(self.rope_inv_freq)
        self.rope_attention_factor = float(attention_factor)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        if ids.dim() != 2:
            raise ValueError(f"expected token ids [batch, T], got shape {tuple(ids.shape)}")
        length = ids.shape[1]
        x = self.tokens(ids)
        if self.position == "learned":
            x = x + self.positions(ids)
        elif self.position == "sinusoidal":
            x = x + sinusoidal_table(length, x.shape[-1]).to(x)
        rope = bias = None
        if self.position == "rope":
            rope = (self.rope_inv_freq, self.rope_attention_factor)
        elif self.position == "alibi":
            bias = alibi_bias(self.n_heads, length, device=ids.device)
        elif self.position == "t5":
            bias = self.t5_bias(length)  # computed once, shared by every layer
        x = self.dropout(x)
        for block in self.blocks:
            x = block(x, rope=rope, bias=bias)
        return self.head(self.norm(x))


# --- Data and training ---------------------------------------------------------------------------


def compact_vocabulary(token_ids: list[int] | torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Renumber the ids that occur to 0..V-1 (the story uses 1,416 of GPT-2's 50,257).

    Returns (compact ids, gpt2_id_of): `gpt2_id_of[compact]` gives back the GPT-2 id, so
    `tokenizer.decode(gpt2_id_of[compact].tolist())` still reads as text. A small output layer
    makes a training step of the tiny model dozens of times cheaper.
    """
    ids = torch.as_tensor(token_ids, dtype=torch.long)
    gpt2_id_of, compact = torch.unique(ids, sorted=True, return_inverse=True)
    return compact, gpt2_id_of


def random_windows(ids: torch.Tensor, length: int, batch_size: int,
                   generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """A batch of random windows (inputs `[B, length]`, targets shifted by one)."""
    if len(ids) < length + 1:
        raise ValueError(f"the text has {len(ids)} tokens, but a window of {length} needs "
                         f"{length + 1} (inputs plus the shifted target)")
    starts = torch.randint(0, len(ids) - length, (batch_size,), generator=generator)
    offsets = torch.arange(length + 1)
    windows = ids[starts[:, None] + offsets]
    return windows[:, :-1], windows[:, 1:]


@torch.no_grad()
def evaluate_loss(model: nn.Module, ids: torch.Tensor, length: int,
                  max_windows: int | None = None) -> float:
    """Mean next-token cross-entropy over non-overlapping windows of `length` tokens."""
    starts = list(range(0, len(ids) - length, length))[:max_windows]
    if not starts:
        raise ValueError(f"the text has {len(ids)} tokens: no window of {length} fits")
    was_training = model.training
    model.eval()
    windows = torch.stack([ids[s:s + length + 1] for s in starts])
    logits = model(windows[:, :-1])
    loss = F.cross_entropy(logits.flatten(0, 1), windows[:, 1:].flatten())
    model.train(was_training)
    return loss.item()


def train_tiny_gpt(model: nn.Module, train_ids: torch.Tensor, steps: int, batch_size: int = 16,
                   learning_rate: float = 3e-3, seed: int = 0, val_ids: torch.Tensor | None = None,
                   eval_every: int = 50, progress: bool = True,
                   length: int | None = None) -> dict[str, list]:
    """Train on random windows of `length` tokens (default: the model's context) with AdamW.

    Seeded: the same arguments give the same model. A `length` beyond the context is for
    fine-tuning a model at a longer length (not possible with a learned table).

    Returns {"step": [...], "train": [...], "val": [...]}: losses every `eval_every` steps
    (train = the mean of the batches since the last record; val = `evaluate_loss` on
    `val_ids`, if given). The progress bar can be switched off with `progress=False` or the
    environment variable TQDM_DISABLE=1 (the course's tests do, to keep stored outputs clean).
    """
    length = length or model.context_length
    generator = torch.Generator().manual_seed(seed)
    optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate, weight_decay=0.01)
    history: dict[str, list] = {"step": [], "train": [], "val": []}
    recent = []
    model.train()
    # Leaving `disable` unset when progress is wanted lets TQDM_DISABLE=1 switch the bar off.
    quiet = {} if progress else {"disable": True}
    bar = tqdm(range(1, steps + 1), leave=False, desc=f"training {model.position}", **quiet)
    for step in bar:
        inputs, targets = random_windows(train_ids, length, batch_size, generator)
        loss = F.cross_entropy(model(inputs).flatten(0, 1), targets.flatten())
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        recent.append(loss.item())
        if step % eval_every == 0 or step == steps:
            history["step"].append(step)
            history["train"].append(sum(recent) / len(recent))
            recent = []
            if val_ids is not None:
                history["val"].append(evaluate_loss(model, val_ids, length))
    model.eval()
    return history
