"""TinyGPT: one small decoder in which every position scheme of the course can be switched on.

Each scheme is taken from its own module, never re-implemented here:

    "none"        no position information at all (only the causal mask hints at order)
    "learned"     helpers.absolute.LearnedPositionalEmbedding, added to the token vectors
    "sinusoidal"  helpers.absolute.sinusoidal_table, added to the token vectors (unscaled)
    "rope"        helpers.rope.apply_rope on the queries and keys of every layer
    "alibi"       helpers.relative.alibi_bias added to the attention logits of every layer
    "t5"          helpers.relative.T5RelativeBias (causal, 32 buckets, max distance 128), one
                  learned table shared by all layers, added to the logits as in T5

A new logit bias needs no change here: a subclass overrides `attention_bias` (notebook 07's
exercises add KERPLE's logarithmic bias that way).

Training and evaluation run on `course_device()`: the GPU when PyTorch sees one (Colab's GPU
runtime), else the CPU, the tested default. That choice is made there and nowhere else.
"""

from __future__ import annotations

import functools
import os

import torch
import torch.nn.functional as F
from torch import nn
from tqdm.auto import tqdm

from .absolute import LearnedPositionalEmbedding, sinusoidal_table
from .evaluation import non_overlapping_loss
from .relative import T5RelativeBias, alibi_bias
from .rope import apply_rope, rope_frequencies
from .rope_scaling import rope_inv_freq

__all__ = ["POSITION_SCHEMES", "TinyGPT", "compact_vocabulary", "train_tiny_gpt",
           "random_windows", "course_device"]

POSITION_SCHEMES = ("none", "learned", "sinusoidal", "rope", "alibi", "t5")

# Set to "cpu" (or "cuda", "mps") to override the automatic choice of course_device().
DEVICE_VARIABLE = "POSITIONS_DEVICE"


@functools.lru_cache(maxsize=1)
def course_device() -> torch.device:
    """Where TinyGPT trains: `$POSITIONS_DEVICE` if set, else the GPU if there is one, else the CPU.

    Chosen once per process. Evaluation always runs wherever the model already is.
    """
    chosen = os.environ.get(DEVICE_VARIABLE) or ("cuda" if torch.cuda.is_available() else "cpu")
    try:
        return torch.device(chosen)
    except RuntimeError as error:
        raise ValueError(f"${DEVICE_VARIABLE}={chosen!r} is not a device torch knows "
                         f"(try 'cpu' or 'cuda'): {error}") from None


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
            mask = bias.masked_fill(future, float("-inf"))  # [heads, T, T]
            # Expanded (a view, no copy) to the batch: PyTorch's CPU attention kernel takes a
            # mask of the full [B, heads, T, T] shape several times faster than a broadcast one.
            mask = mask.expand(batch, -1, -1, -1)
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
            self.rope_scaling = None  # set by set_rope_scaling for a length-dependent method
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
        self.rope_scaling = None

    def set_rope_scaling(self, scaling: dict | None, base: float = 10000.0) -> None:
        """Stretch RoPE with a `rope_scaling` dict (see `helpers.rope_scaling.rope_inv_freq`).

        Every method but "dynamic" gives fixed frequencies, set once here. Dynamic NTK scaling
        depends on the length of the input, so the model recomputes its frequencies at every
        call from the number of tokens it is given.
        """
        if self.position != "rope":
            raise ValueError(f"this model uses position={self.position!r}, not 'rope'")
        self.set_rope_frequencies(*rope_inv_freq(2 * len(self.rope_inv_freq), base, scaling))
        if scaling is not None and scaling.get("rope_type", scaling.get("type")) == "dynamic":
            self.rope_scaling = (dict(scaling), base)

    def attention_bias(self, length: int, device: torch.device) -> torch.Tensor | None:
        """What every layer adds to its attention logits: `[heads, length, length]`, or None.

        Row i is the query, column j the key; entries above the diagonal (future keys) are
        masked afterwards, so their values do not matter. A subclass can override this method
        to try a new relative bias without touching the rest of the model.
        """
        if self.position == "alibi":
            return alibi_bias(self.n_heads, length, device=device)
        if self.position == "t5":
            return self.t5_bias(length)
        return None

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        if ids.dim() != 2:
            raise ValueError(f"expected token ids [batch, T], got shape {tuple(ids.shape)}")
        length = ids.shape[1]
        x = self.tokens(ids)
        if self.position == "learned":
            x = x + self.positions(ids)
        elif self.position == "sinusoidal":
            x = x + sinusoidal_table(length, x.shape[-1]).to(x)
        rope = None
        if self.position == "rope":
            inv_freq = self.rope_inv_freq
            if self.rope_scaling is not None:  # dynamic NTK: frequencies for this length
                scaling, base = self.rope_scaling
                inv_freq, _ = rope_inv_freq(2 * len(inv_freq), base, scaling, seq_len=length)
                inv_freq = inv_freq.to(self.rope_inv_freq)
            rope = (inv_freq, self.rope_attention_factor)
        bias = self.attention_bias(length, ids.device)  # computed once, shared by every layer
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
    """A batch of random windows (inputs `[B, length]`, targets shifted by one), on ids' device.

    The starts are drawn on the CPU from `generator`, so a seed picks the same windows on
    every device.
    """
    if len(ids) < length + 1:
        raise ValueError(f"the text has {len(ids)} tokens, but a window of {length} needs "
                         f"{length + 1} (inputs plus the shifted target)")
    starts = torch.randint(0, len(ids) - length, (batch_size,), generator=generator)
    offsets = torch.arange(length + 1)
    windows = ids[(starts[:, None] + offsets).to(ids.device)]
    return windows[:, :-1], windows[:, 1:]


def train_tiny_gpt(model: nn.Module, train_ids: torch.Tensor, steps: int, batch_size: int = 16,
                   learning_rate: float = 3e-3, seed: int = 0, val_ids: torch.Tensor | None = None,
                   eval_every: int = 50, progress: bool = True, length: int | None = None,
                   task=None) -> dict[str, list]:
    """Train on random windows of `length` tokens (default: the model's context) with AdamW.

    Seeded: the same arguments give the same model. A `length` beyond the context is for
    fine-tuning a model at a longer length (not possible with a learned table). The model is
    moved to `course_device()` and stays there.

    `task`, if given, is a game mixed into the windows, such as `helpers.retrieval.PasskeyTask`:
    its `training_batch` replaces the plain windows, and the loss on its answers (read at each
    window's last position), times `task.weight`, is added to the language-model loss.

    Returns {"step": [...], "train": [...], "val": [...]} and, with a task, "task": [...]:
    losses every `eval_every` steps (train = the mean language-model loss of the batches since
    the last record, task = the same for the game's answers; val = `non_overlapping_loss` on
    `val_ids`, if given). The progress bar can be switched off with `progress=False` or the
    environment variable TQDM_DISABLE=1 (the course's tests do, to keep stored outputs clean).
    """
    length = length or model.context_length
    device = course_device()
    model.to(device)
    train_ids = train_ids.to(device)
    generator = torch.Generator().manual_seed(seed)
    # fused: one kernel for all parameters instead of a few per parameter (CPU and GPU alike).
    optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate, weight_decay=0.01,
                                  fused=True)
    history: dict[str, list] = {"step": [], "train": [], "val": []} | (
        {"task": []} if task is not None else {})
    recent = []
    model.train()
    # Leaving `disable` unset when progress is wanted lets TQDM_DISABLE=1 switch the bar off.
    quiet = {} if progress else {"disable": True}
    bar = tqdm(range(1, steps + 1), leave=False, desc=f"training {model.position}", **quiet)
    for step in bar:
        if task is None:
            inputs, targets = random_windows(train_ids, length, batch_size, generator)
            logits = model(inputs)
            losses = [F.cross_entropy(logits.flatten(0, 1), targets.flatten())]
        else:
            inputs, targets, answers = task.training_batch(train_ids, length, batch_size,
                                                           generator)
            losses = _story_and_game_losses(model(inputs), targets, answers)
        optimizer.zero_grad(set_to_none=True)
        (losses[0] if task is None else losses[0] + task.weight * losses[1]).backward()
        optimizer.step()
        # Kept as tensors: an .item() at every step would make a GPU wait at every step.
        recent.append(torch.stack([loss.detach() for loss in losses]))
        if step % eval_every == 0 or step == steps:
            means = torch.stack(recent).mean(dim=0).tolist()
            history["step"].append(step)
            history["train"].append(means[0])
            if task is not None:
                history["task"].append(means[1])
            recent = []
            if val_ids is not None:
                history["val"].append(non_overlapping_loss(model, val_ids, length))
    model.eval()
    return history


def _story_and_game_losses(logits: torch.Tensor, targets: torch.Tensor,
                           answers: torch.Tensor) -> list[torch.Tensor]:
    """[mean loss on the story's next tokens, mean loss on the game's answers].

    One cross-entropy over every position serves both: a window with a question has no story
    target at its last position (IGNORE, -100), so its answer takes that place.
    """
    asks = answers != -100
    merged = targets.clone()
    merged[asks, -1] = answers[asks]
    per_token = F.cross_entropy(logits.flatten(0, 1), merged.flatten(),
                                reduction="none").view_as(targets)
    story = targets != -100
    game = torch.zeros_like(story)
    game[:, -1] = asks
    # Clamped: a batch without a question adds nothing to the game's loss.
    return [(per_token * story).sum() / story.sum(),
            (per_token * game).sum() / game.sum().clamp(min=1)]
