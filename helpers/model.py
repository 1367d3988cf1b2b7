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

Beyond one window at a time (how models are used, not only trained):

    model(ids, attention_mask=mask)     a padded batch: pads are never attended to, and each
                                        token's position counts only the real tokens before it
    model(ids, document_ids=docs)       packed rows: each document sees only itself, and its
                                        positions restart at 0
    model(ids, cache=cache)             a KVCache keeps every layer's keys and values, so the
                                        next call feeds only the new tokens
    model.generate(ids, n)              greedy decoding, with the cache by default

`architecture="llama"` swaps LayerNorm for RMSNorm and the GELU MLP for SwiGLU, with no biases,
as in Llama: with RoPE, the same network as Hugging Face's `LlamaForCausalLM` (see
`helpers.checkpoints` for the weights' names there).

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
from .inference import (packed_attention_mask, packed_position_ids,
                        position_ids_from_mask)
from .relative import T5RelativeBias, alibi_bias
from .rope import apply_rope, rope_frequencies
from .rope_scaling import rope_inv_freq

__all__ = ["POSITION_SCHEMES", "ARCHITECTURES", "TinyGPT", "KVCache", "compact_vocabulary",
           "train_tiny_gpt", "random_windows", "course_device"]

POSITION_SCHEMES = ("none", "learned", "sinusoidal", "rope", "alibi", "t5")
ARCHITECTURES = ("gpt2", "llama")

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


class KVCache:
    """The keys and values of every token seen so far, per layer: `[B, heads, T_past, head_dim]`.

    Keys are stored as the attention used them: already rotated (RoPE), or made from token
    vectors that already carry their position (absolute tables). So a cached key never needs
    its position again, and without padding the next token's position is simply `len(cache)`
    (a left-padded row's is the number of its real tokens, since the cache holds its pads too).
    """

    def __init__(self):
        self.keys: list[torch.Tensor] = []
        self.values: list[torch.Tensor] = []

    def __len__(self) -> int:
        """How many tokens (per row, pads included) the cache holds."""
        return self.keys[0].shape[-2] if self.keys else 0

    def extend(self, layer: int, keys: torch.Tensor,
               values: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Append this layer's new keys and values; return all of them, old and new."""
        if layer == len(self.keys):  # the first call fills each layer once
            self.keys.append(keys)
            self.values.append(values)
        else:
            self.keys[layer] = torch.cat((self.keys[layer], keys), dim=-2)
            self.values[layer] = torch.cat((self.values[layer], values), dim=-2)
        return self.keys[layer], self.values[layer]


class CausalSelfAttention(nn.Module):
    """Multi-head causal self-attention; RoPE and logit biases enter here when asked for."""

    def __init__(self, d_model: int, n_heads: int):
        super().__init__()
        self.n_heads = n_heads
        self.qkv = nn.Linear(d_model, 3 * d_model, bias=False)
        self.out = nn.Linear(d_model, d_model, bias=False)

    def queries_keys_values(self, x: torch.Tensor, rope: tuple | None = None):
        """q, k, v `[B, heads, T, head_dim]` from x `[B, T, d]`, queries and keys rotated by RoPE."""
        batch, length, _ = x.shape
        q, k, v = self.qkv(x).view(batch, length, 3, self.n_heads, -1).permute(2, 0, 3, 1, 4)
        if rope is not None:
            inv_freq, attention_factor, positions = rope
            # Rotate queries and keys (never values). A scaling method may also ask for an
            # attention factor on cos and sin, which scales every logit by its square.
            q = apply_rope(q, positions, inv_freq=inv_freq) * attention_factor
            k = apply_rope(k, positions, inv_freq=inv_freq) * attention_factor
        return q, k, v

    def forward(self, x: torch.Tensor, rope: tuple | None = None,
                bias: torch.Tensor | None = None, allowed: torch.Tensor | None = None,
                cache: KVCache | None = None, layer: int = 0) -> torch.Tensor:
        """`rope` is (inv_freq, attention_factor, positions or None); `bias` `[heads, T, T_keys]`;
        `allowed` `[B, 1, T, T_keys]` says which key each query may see (None: plain causal)."""
        batch, length, d_model = x.shape
        q, k, v = self.queries_keys_values(x, rope)
        if cache is not None:  # the new keys join the cached ones (already rotated)
            k, v = cache.extend(layer, k, v)
        if allowed is None and bias is None:
            mixed = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        elif allowed is None:
            future = torch.ones(length, length, dtype=torch.bool, device=x.device).triu(1)
            mask = bias.masked_fill(future, float("-inf"))  # [heads, T, T]
            # Expanded (a view, no copy) to the batch: PyTorch's CPU attention kernel takes a
            # mask of the full [B, heads, T, T] shape several times faster than a broadcast one.
            mask = mask.expand(batch, -1, -1, -1)
            mixed = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        elif bias is None:
            mixed = F.scaled_dot_product_attention(q, k, v, attn_mask=allowed)
        else:
            mask = bias.masked_fill(~allowed, float("-inf"))  # [B, heads, T, T_keys]
            mixed = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        return self.out(mixed.transpose(1, 2).reshape(batch, length, d_model))


class SwiGLU(nn.Module):
    """Llama's MLP: down(silu(gate(x)) * up(x)), no biases."""

    def __init__(self, d_model: int, hidden: int):
        super().__init__()
        self.gate = nn.Linear(d_model, hidden, bias=False)
        self.up = nn.Linear(d_model, hidden, bias=False)
        self.down = nn.Linear(hidden, d_model, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down(F.silu(self.gate(x)) * self.up(x))


def _norm(d_model: int, architecture: str) -> nn.Module:
    # Llama's RMSNorm: scale only (no mean subtracted, no bias), epsilon 1e-6 as in its config.
    return nn.LayerNorm(d_model) if architecture == "gpt2" else nn.RMSNorm(d_model, eps=1e-6)


class Block(nn.Module):
    """Pre-norm transformer block: x + attention(norm(x)), then x + MLP(norm(x))."""

    def __init__(self, d_model: int, n_heads: int, architecture: str = "gpt2"):
        super().__init__()
        self.norm1 = _norm(d_model, architecture)
        self.attention = CausalSelfAttention(d_model, n_heads)
        self.norm2 = _norm(d_model, architecture)
        if architecture == "gpt2":
            self.mlp = nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.GELU(),
                                     nn.Linear(4 * d_model, d_model))
        else:
            self.mlp = SwiGLU(d_model, 4 * d_model)

    def forward(self, x, rope=None, bias=None, allowed=None, cache=None, layer=0):
        x = x + self.attention(self.norm1(x), rope=rope, bias=bias, allowed=allowed,
                               cache=cache, layer=layer)
        return x + self.mlp(self.norm2(x))


class TinyGPT(nn.Module):
    """A small GPT: ids `[B, T]` -> next-token logits `[B, T, vocab_size]`.

    `position` picks the scheme (see POSITION_SCHEMES). Every scheme accepts T longer than
    `context_length` except "learned", whose table has no rows there and raises ValueError.
    `architecture` is "gpt2" (LayerNorm, GELU MLP) or "llama" (RMSNorm, SwiGLU, no biases).
    `t5_max_distance` is where T5's causal buckets stop growing (position="t5" only).
    """

    def __init__(self, vocab_size: int, context_length: int, d_model: int = 64, n_heads: int = 4,
                 n_layers: int = 2, position: str = "rope", dropout: float = 0.0,
                 architecture: str = "gpt2", t5_max_distance: int = 128):
        super().__init__()
        if position not in POSITION_SCHEMES:
            raise ValueError(f"position must be one of {POSITION_SCHEMES}, got {position!r}")
        if architecture not in ARCHITECTURES:
            raise ValueError(f"architecture must be one of {ARCHITECTURES}, got {architecture!r}")
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
        self.architecture = architecture
        self.context_length = context_length
        self.n_heads = n_heads
        self.tokens = nn.Embedding(vocab_size, d_model)
        self.dropout = nn.Dropout(dropout)
        if position == "learned":
            self.positions = LearnedPositionalEmbedding(context_length, d_model)
        if position == "t5":
            # T5 used 32 buckets up to distance 128 and trained on 512 tokens, so every bucket
            # saw training. A model trained on fewer than 128 tokens needs a smaller reach, or
            # its last buckets never train (lesson 07 shows both).
            self.t5_bias = T5RelativeBias(n_heads, num_buckets=32, max_distance=t5_max_distance,
                                          bidirectional=False)
        if position == "rope":
            # A buffer, not a parameter: fixed, saved with the model, replaceable afterwards.
            self.register_buffer("rope_inv_freq", rope_frequencies(head_dim))
            self.rope_attention_factor = 1.0
            self.rope_scaling = None  # set by set_rope_scaling for a length-dependent method
        self.blocks = nn.ModuleList(Block(d_model, n_heads, architecture)
                                    for _ in range(n_layers))
        self.norm = _norm(d_model, architecture)
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

    def forward(self, ids: torch.Tensor, attention_mask: torch.Tensor | None = None,
                document_ids: torch.Tensor | None = None,
                cache: KVCache | None = None, logits_to_keep: int = 0) -> torch.Tensor:
        """Next-token logits `[B, T, vocab_size]` for token ids `[B, T]`.

        attention_mask  `[B, T_cache + T]` of 1 (a real token) and 0 (a pad), covering the
                        cached tokens too, as in Hugging Face. Pads are never attended to, and
                        a token's position is the number of real tokens before it.
        document_ids    `[B, T]`, non-decreasing along each row: packed documents. A token
                        sees only its own document, whose positions start again at 0.
        cache           a KVCache: the tokens it holds come before `ids`, and the new keys
                        and values are added to it.
        With none of them: one window, positions 0..T-1, plain causal attention.
        logits_to_keep  0 (all positions) or n: logits of the last n positions only, `[B, n, V]`,
                        as Hugging Face's argument of that name. The vocabulary projection is a
                        large part of the work on long windows; a question asked at the last
                        token needs only its row.
        """
        if isinstance(logits_to_keep, bool) or not isinstance(logits_to_keep, int) or \
                logits_to_keep < 0:
            raise ValueError(f"logits_to_keep must be 0 (all positions) or a positive number of "
                             f"last positions, got logits_to_keep={logits_to_keep!r}")
        if ids.dim() != 2:
            raise ValueError(f"expected token ids [batch, T], got shape {tuple(ids.shape)}")
        past = 0 if cache is None else len(cache)
        positions, allowed = self._positions_and_mask(ids, attention_mask, document_ids, past)
        x = self.tokens(ids)
        if self.position == "learned":
            x = x + (self.positions(ids) if positions is None else self.positions.at(positions))
        elif self.position == "sinusoidal":
            if positions is None:
                x = x + sinusoidal_table(ids.shape[1], x.shape[-1]).to(x)
            else:  # the table's rows at each token's own position
                table = sinusoidal_table(int(positions.max()) + 1, x.shape[-1]).to(x)
                x = x + table[positions]
        rope = None
        if self.position == "rope":
            inv_freq = self.rope_inv_freq
            if self.rope_scaling is not None:
                # Dynamic NTK: frequencies for the longest position so far. With a cache, only
                # the new keys get them; the cached keys keep the frequencies they were turned by.
                scaling, base = self.rope_scaling
                seq_len = ids.shape[1] if positions is None else int(positions.max()) + 1
                inv_freq, _ = rope_inv_freq(2 * len(inv_freq), base, scaling, seq_len=seq_len)
                inv_freq = inv_freq.to(self.rope_inv_freq)
            rope = (inv_freq, self.rope_attention_factor,
                    None if positions is None else positions[:, None, :])  # [B, 1, T]: all heads
        # Computed once, shared by every layer. A relative bias depends on j - i only, and
        # neither left pads nor packing change j - i between two tokens that may see each other,
        # so the bias of the row's indices serves; the new queries need only their own rows.
        bias = self.attention_bias(past + ids.shape[1], ids.device)
        if bias is not None and past:
            bias = bias[:, past:, :]
        x = self.dropout(x)
        for layer, block in enumerate(self.blocks):
            x = block(x, rope=rope, bias=bias, allowed=allowed, cache=cache, layer=layer)
        if logits_to_keep:
            x = x[:, -logits_to_keep:]
        return self.head(self.norm(x))

    def _positions_and_mask(self, ids, attention_mask, document_ids, past):
        """Each token's position `[B, T]` and which keys each query may see `[B, 1, T, past+T]`.

        Both None for a single window from position 0 (the fast path training uses).
        """
        batch, length = ids.shape
        if attention_mask is None and document_ids is None and past == 0:
            return None, None
        if attention_mask is not None and document_ids is not None:
            raise ValueError("give attention_mask (a padded batch) or document_ids (packed "
                             "documents), not both")
        device = ids.device
        if document_ids is not None:
            if past:
                raise ValueError("document_ids are for packed training rows; they cannot be "
                                 "used with a cache")
            document_ids = _check_document_ids(document_ids, ids.shape).to(device)
            # Positions count from each document's start; a token sees its own document only.
            return packed_position_ids(document_ids), packed_attention_mask(document_ids)[:, None]
        query = torch.arange(past, past + length, device=device)  # index in the row
        key = torch.arange(past + length, device=device)
        allowed = key[None, :] <= query[:, None]  # causal: [T, past + T]
        if attention_mask is None:  # a cache and no pads: positions continue from the cache
            return query.expand(batch, -1), allowed.expand(batch, 1, -1, -1)
        real = _check_attention_mask(attention_mask, (batch, past + length)).to(device)
        # A token's position = how many real tokens come before it (pads get 0; unused).
        positions = position_ids_from_mask(real)[:, past:]
        allowed = allowed & real[:, None, :].bool()
        # A pad query may see itself, so that its softmax row is not empty (its output is
        # never read: real tokens do not attend to pads).
        allowed = allowed | (key[None, :] == query[:, None])
        return positions, allowed[:, None]

    @torch.no_grad()
    def generate(self, ids: torch.Tensor, max_new_tokens: int,
                 attention_mask: torch.Tensor | None = None, use_cache: bool = True,
                 output_logits: bool = False):
        """Greedy decoding: append the most likely next token, `max_new_tokens` times.

        ids             `[B, T]` prompts; rows of different lengths are padded on the left,
                        with `attention_mask` (1 = real token, 0 = pad) saying where
        use_cache       keep keys and values (KVCache) and feed one new token per step;
                        False recomputes the whole sequence at every step
        Returns ids `[B, T + max_new_tokens]`, and with `output_logits=True` also the logits
        each new token was chosen from, `[B, max_new_tokens, vocab_size]`. Runs in eval mode
        (no dropout) and restores the model's mode afterwards.
        """
        if ids.dim() != 2 or ids.shape[1] == 0:
            raise ValueError(f"expected prompts [batch, T] with T >= 1, got shape "
                             f"{tuple(ids.shape)}")
        if isinstance(max_new_tokens, bool) or not isinstance(max_new_tokens, int) \
                or max_new_tokens < 0:
            raise ValueError(f"max_new_tokens must be an integer >= 0, got {max_new_tokens!r}")
        if attention_mask is not None:
            real = _check_attention_mask(attention_mask, tuple(ids.shape))
            if (real[:, 1:] < real[:, :-1]).any():
                row = int((real[:, 1:] < real[:, :-1]).any(dim=1).nonzero()[0])
                raise ValueError(f"generate needs left padding (pads before the prompt, e.g. "
                                 f"a tokenizer's padding_side='left'): row {row} of "
                                 f"attention_mask has a pad after a real token, so new tokens "
                                 f"would follow the pads")
            attention_mask = real
        longest = ids.shape[1] if attention_mask is None else int(attention_mask.sum(1).max())
        # The last new token is chosen but never fed back, so the model reads positions up to
        # longest + max_new_tokens - 2.
        last_fed = longest - 1 + max(max_new_tokens - 1, 0)
        if self.position == "learned" and last_fed >= self.context_length:
            raise ValueError(f"a prompt of {longest} tokens plus {max_new_tokens} new ones feeds "
                             f"the model positions up to {last_fed}, but the learned table has "
                             f"rows only for positions 0..{self.context_length - 1}")
        was_training = self.training
        self.eval()
        try:
            cache = KVCache() if use_cache else None
            chosen, step_logits = [], []
            step_ids = ids
            for _ in range(max_new_tokens):
                logits = self(step_ids, attention_mask=attention_mask, cache=cache)[:, -1]
                next_ids = logits.argmax(dim=-1, keepdim=True)
                chosen.append(next_ids)
                step_logits.append(logits)
                if attention_mask is not None:
                    attention_mask = F.pad(attention_mask, (0, 1), value=1)
                # With a cache only the new token is fed; without, the whole sequence again.
                step_ids = next_ids if use_cache else torch.cat([ids, *chosen], dim=1)
        finally:
            self.train(was_training)
        out = torch.cat([ids, *chosen], dim=1)
        if not output_logits:
            return out
        vocab = self.head.out_features
        logits = (torch.stack(step_logits, dim=1) if step_logits
                  else torch.empty(ids.shape[0], 0, vocab, device=ids.device))
        return out, logits


def _check_attention_mask(mask, shape: tuple) -> torch.Tensor:
    """A `[B, T]` mask of 0 and 1 with a real token in every row, as a long tensor."""
    mask = torch.as_tensor(mask)
    if tuple(mask.shape) != tuple(shape):
        raise ValueError(f"attention_mask must have shape [batch, tokens so far] = "
                         f"{list(shape)} (cached tokens included), got {list(mask.shape)}")
    if mask.is_floating_point() or mask.is_complex() or not ((mask == 0) | (mask == 1)).all():
        raise ValueError("attention_mask must hold the integers 1 (a real token) and 0 (a pad)")
    if not mask.any(dim=1).all():
        raise ValueError("every row of attention_mask needs at least one real token (a 1)")
    return mask.long()


def _check_document_ids(document_ids, shape: tuple) -> torch.Tensor:
    document_ids = torch.as_tensor(document_ids)
    if tuple(document_ids.shape) != tuple(shape):
        raise ValueError(f"document_ids must have the shape of ids, {list(shape)}, got "
                         f"{list(document_ids.shape)}")
    if document_ids.is_floating_point() or document_ids.dtype == torch.bool:
        raise ValueError(f"document_ids must be integers, got {document_ids.dtype}")
    if (document_ids[:, 1:] < document_ids[:, :-1]).any():
        raise ValueError("document_ids must be non-decreasing along each row: a packed row "
                         "holds each document in one piece, in order")
    return document_ids


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
