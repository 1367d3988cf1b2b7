"""helpers.inference: position ids from a padding mask, left padding, packed rows."""

import pytest
import torch

from helpers.inference import (left_pad, pack, packed_attention_mask, packed_position_ids,
                               position_ids_from_mask)


def test_position_ids_count_the_real_tokens_before_each_token():
    mask = torch.tensor([[0, 0, 1, 1, 1], [1, 1, 1, 1, 1], [1, 1, 0, 0, 0]])
    assert position_ids_from_mask(mask).tolist() == [[0, 0, 0, 1, 2], [0, 1, 2, 3, 4],
                                                     [0, 1, 0, 0, 0]]
    assert position_ids_from_mask([[1, 1]]).tolist() == [[0, 1]]  # lists too


def test_a_left_padded_row_is_numbered_as_its_prompt_alone():
    ids, mask = left_pad([torch.tensor([5, 6, 7]), [8], torch.tensor([[1, 2]])], pad_id=9)
    assert ids.tolist() == [[5, 6, 7], [9, 9, 8], [9, 1, 2]]
    assert mask.tolist() == [[1, 1, 1], [0, 0, 1], [0, 1, 1]]
    positions = position_ids_from_mask(mask)
    assert positions[mask.bool()].tolist() == [0, 1, 2, 0, 0, 1]
    with pytest.raises(ValueError, match="at least one token"):
        left_pad([[1], []])


def test_packed_positions_restart_and_the_mask_is_block_diagonal_and_causal():
    ids, documents = pack([[4, 4, 4], [5], [6, 6]])
    assert ids.tolist() == [[4, 4, 4, 5, 6, 6]] and documents.tolist() == [[0, 0, 0, 1, 2, 2]]
    assert packed_position_ids(documents).tolist() == [[0, 1, 2, 0, 0, 1]]
    mask = packed_attention_mask(documents)[0]
    assert mask.shape == (6, 6)
    expected = torch.zeros(6, 6, dtype=torch.bool)
    for start, length in [(0, 3), (3, 1), (4, 2)]:
        block = slice(start, start + length)
        expected[block, block] = torch.ones(length, length).tril().bool()
    assert torch.equal(mask, expected)
    # one document: plain causal mask and positions 0..T-1
    single = torch.zeros(1, 5, dtype=torch.long)
    assert packed_position_ids(single).tolist() == [[0, 1, 2, 3, 4]]
    assert torch.equal(packed_attention_mask(single)[0], torch.ones(5, 5).tril().bool())
    with pytest.raises(ValueError, match="at least one token"):
        pack([[1], []])


def test_packed_helpers_take_a_batch_and_one_row_alike():
    documents = torch.tensor([[0, 0, 1, 1], [0, 1, 2, 2]])
    assert packed_position_ids(documents).tolist() == [[0, 1, 0, 1], [0, 0, 0, 1]]
    assert packed_position_ids(documents[1]).tolist() == [0, 0, 0, 1]
    assert packed_attention_mask(documents).shape == (2, 4, 4)
    assert torch.equal(packed_attention_mask(documents[1]), packed_attention_mask(documents)[1])
