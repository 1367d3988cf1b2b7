"""Positions at inference: position ids from a padding mask, left-padded batches, packed rows.

    position_ids_from_mask(mask)        each real token's position = real tokens before it
    left_pad(rows, pad_id=0)            prompts of different lengths -> (ids, attention_mask)
    pack(documents)                     documents in one row -> (ids, document_ids)
    packed_position_ids(document_ids)   positions that start again at 0 in every document
    packed_attention_mask(document_ids) which key each query may see: causal, own document only

Pure functions of integer tensors, no model. `helpers.model.TinyGPT` computes its positions with
the first and the two `packed_...` ones, so the lesson and the model share one definition.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

__all__ = ["position_ids_from_mask", "left_pad", "pack", "packed_position_ids",
           "packed_attention_mask"]


def position_ids_from_mask(attention_mask: torch.Tensor) -> torch.Tensor:
    """`[B, T]` mask of 1 (real token) and 0 (pad) -> `[B, T]` positions.

    A real token's position is the number of real tokens before it (a cumulative sum of the
    mask, minus 1); pads get 0, as in Hugging Face's generate, so that a learned table can
    still look them up (their outputs are never read).
    """
    mask = torch.as_tensor(attention_mask).long()
    return (mask.cumsum(dim=-1) - 1) * mask


def left_pad(rows, pad_id: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """Prompts of different lengths as one batch, pads on the left: (ids, attention_mask).

    Left, because generation appends new tokens on the right: each row's last column is then
    its own last real token.
    """
    rows = [torch.as_tensor(row, dtype=torch.long).flatten() for row in rows]
    if not rows or any(len(row) == 0 for row in rows):
        raise ValueError("left_pad needs at least one row, and every row at least one token")
    width = max(len(row) for row in rows)
    ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
    mask = torch.zeros(len(rows), width, dtype=torch.long)
    for i, row in enumerate(rows):
        ids[i, width - len(row):] = row
        mask[i, width - len(row):] = 1
    return ids, mask


def pack(documents) -> tuple[torch.Tensor, torch.Tensor]:
    """Documents end to end in one row: (ids `[1, T]`, document_ids `[1, T]`: 0, 0, 1, 1, 1, ...)."""
    documents = [torch.as_tensor(document, dtype=torch.long).flatten() for document in documents]
    if not documents or any(len(document) == 0 for document in documents):
        raise ValueError("pack needs at least one document, and every document at least one token")
    lengths = torch.tensor([len(document) for document in documents])
    document_ids = torch.repeat_interleave(torch.arange(len(documents)), lengths)
    return torch.cat(documents)[None], document_ids[None]


def _starts(document_ids: torch.Tensor) -> torch.Tensor:
    """True where a new document begins (the first token of a row, and every change of id)."""
    return document_ids != F.pad(document_ids, (1, 0), value=-1)[..., :-1]


def packed_position_ids(document_ids: torch.Tensor) -> torch.Tensor:
    """`[B, T]` document ids (non-decreasing along each row) -> positions from 0 in each document."""
    document_ids = torch.as_tensor(document_ids)
    index = torch.arange(document_ids.shape[-1], device=document_ids.device).expand_as(
        document_ids)
    # Where each token's document starts: the latest start at or before it.
    first = torch.where(_starts(document_ids), index, torch.zeros_like(index)).cummax(dim=-1)
    return index - first.values


def packed_attention_mask(document_ids: torch.Tensor) -> torch.Tensor:
    """`[B, T]` document ids -> `[B, T, T]` booleans: query i may see key j when j <= i and both
    tokens belong to the same document (block-diagonal, each block causal)."""
    document_ids = torch.as_tensor(document_ids)
    length = document_ids.shape[-1]
    index = torch.arange(length, device=document_ids.device)
    causal = index[None, :] <= index[:, None]
    same_document = document_ids[..., :, None] == document_ids[..., None, :]
    return causal & same_document
