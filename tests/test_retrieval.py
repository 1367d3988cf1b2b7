"""The passkey game: where each token goes, what is scored, what accuracy measures, and that a
TinyGPT trained with the game learns it."""

import pytest
import torch
from torch import nn

from helpers import TinyGPT, train_tiny_gpt
from helpers.retrieval import (IGNORE, PLACEMENTS, PasskeyTask, passkey_accuracy, passkey_grid,
                               passkey_placements, passkey_windows)

STORY_VOCAB = 20
STORY = torch.arange(400) % STORY_VOCAB  # the next token is always (token + 1) % 20
TASK = PasskeyTask(STORY_VOCAB, num_passkeys=4)


def test_the_game_has_its_own_tokens_after_the_story():
    assert (TASK.key_id, TASK.query_id) == (20, 21)
    assert TASK.passkey_ids.tolist() == [22, 23, 24, 25]
    assert TASK.vocab_size == 26


def test_hide_puts_key_passkey_and_query_where_the_distance_says():
    inputs, targets = STORY[:10][None].repeat(3, 1), STORY[1:11][None].repeat(3, 1)
    original = inputs.clone()
    hidden, scored, answers = TASK.hide(inputs, targets, torch.tensor([1, 4, 8]),
                                        torch.Generator().manual_seed(0))
    assert torch.equal(inputs, original), "hide must not change its arguments"
    for row, distance in enumerate([1, 4, 8]):
        at = 9 - distance
        assert hidden[row, at - 1] == TASK.key_id and hidden[row, at] == answers[row]
        assert hidden[row, 9] == TASK.query_id
        story = [i for i in range(9) if i not in (at - 1, at)]
        assert torch.equal(hidden[row, story], original[row, story])
        # No story predicts the token before <key>, the passkey or <query>; the answer is
        # scored apart from the story's targets.
        ignored = {i for i in (at - 2, at - 1, 8, 9) if i >= 0}
        assert {i for i in range(10) if scored[row, i] == IGNORE} == ignored
    assert set(answers.tolist()) <= set(TASK.passkey_ids.tolist())


def test_training_batches_mix_plain_windows_and_windows_with_a_passkey():
    task = PasskeyTask(STORY_VOCAB, num_passkeys=4, fraction=0.25)
    inputs, targets, answers = task.training_batch(STORY, 12, 8, torch.Generator().manual_seed(1))
    assert inputs.shape == targets.shape == (8, 12) and answers.shape == (8,)
    with_passkey = answers != IGNORE
    assert with_passkey.tolist() == [True, True] + [False] * 6
    assert torch.equal((inputs[2:] + 1) % STORY_VOCAB, targets[2:])  # plain: the story, shifted
    assert (inputs[:2, -1] == task.query_id).all() and (targets[:2, -1] == IGNORE).all()
    assert (targets[targets != IGNORE] < STORY_VOCAB).all(), "the story targets stay story tokens"
    again = task.training_batch(STORY, 12, 8, torch.Generator().manual_seed(1))
    assert all(torch.equal(a, b) for a, b in zip((inputs, targets, answers), again))


class LooksBack(nn.Module):
    """Names the passkey if <key> is within `reach` tokens of the query, else passkey 0."""

    def __init__(self, task, reach):
        super().__init__()
        self.task, self.reach = task, reach
        self.unused = nn.Parameter(torch.zeros(1))

    def forward(self, ids):
        length = ids.shape[1]
        guesses = torch.full((len(ids),), int(self.task.passkey_ids[0]))
        for row, window in enumerate(ids):
            keys = (window == self.task.key_id).nonzero().flatten()
            if len(keys) and length - 1 - (keys[-1] + 1) <= self.reach:
                guesses[row] = window[keys[-1] + 1]
        logits = torch.zeros(len(ids), length, self.task.vocab_size)
        logits[torch.arange(len(ids)), -1, guesses] = 1.0
        return logits


def test_accuracy_counts_passkeys_named_at_the_distances_asked_for():
    model = LooksBack(TASK, reach=10)
    assert passkey_accuracy(model, TASK, STORY, 64, (1, 10), count=40) == 1.0
    far = passkey_accuracy(model, TASK, STORY, 64, (11, 62), count=200)
    assert 0.15 < far < 0.35  # only the lucky guesses of passkey 0: chance is 1 / 4
    assert passkey_accuracy(model, TASK, STORY, 64, (11, 62), count=200) == far  # seeded


def test_accuracy_leaves_no_graph_and_restores_training_mode():
    torch.manual_seed(0)
    model = TinyGPT(TASK.vocab_size, 16, d_model=16, n_heads=2, n_layers=1).train()
    accuracy = passkey_accuracy(model, TASK, STORY, 32, (1, 30), count=8)
    assert isinstance(accuracy, float) and model.training


def test_a_tiny_gpt_trained_with_the_game_learns_it():
    torch.manual_seed(0)
    model = TinyGPT(TASK.vocab_size, 16, d_model=32, n_heads=4, n_layers=2, position="rope")
    history = train_tiny_gpt(model, STORY, steps=150, batch_size=16, learning_rate=3e-3,
                             task=TASK, progress=False, eval_every=50)
    assert history["task"][-1] < 0.3 * history["task"][0]
    assert passkey_accuracy(model, TASK, STORY, 16, (1, 14), count=64) > 0.9


def test_render_shows_the_game_tokens_among_the_story():
    window = torch.tensor([3, 4, TASK.key_id, 24, 5, TASK.query_id])
    text = TASK.render(window, lambda ids: "".join(f"[{i}]" for i in ids))
    assert text == "[3][4] <key> <p2>[5] <query>"


@pytest.mark.parametrize("settings,message", [
    (dict(text_vocab_size=0), r"text_vocab_size must be a positive integer, got text_vocab_size=0"),
    (dict(text_vocab_size=20, num_passkeys=0), r"num_passkeys must be a positive integer"),
    (dict(text_vocab_size=20, fraction=1.5), r"fraction must be a share .* got fraction=1.5"),
    (dict(text_vocab_size=20, weight=-1), r"weight must be a number of at least 0"),
])
def test_bad_settings_are_named(settings, message):
    with pytest.raises(ValueError, match=message):
        PasskeyTask(**settings)


@pytest.mark.parametrize("call,message", [
    (lambda m: passkey_accuracy(m, TASK, STORY, 32, (0, 5)), r"1 <= shortest <= longest <= "
                                                            r"length - 2 = 30, got \(0, 5\)"),
    (lambda m: passkey_accuracy(m, TASK, STORY, 32, (5, 31)), r"length - 2 = 30, got \(5, 31\)"),
    (lambda m: passkey_accuracy(m, TASK, STORY, 32, (1, 5), count=0), r"count must be a positive"),
    (lambda m: passkey_accuracy(m, TASK, STORY[:20], 32, (1, 5)), r"20 tokens, but a window of 32"),
    (lambda m: TASK.hide(STORY[:8][None], STORY[1:9][None], torch.tensor([7]), torch.Generator()),
     r"d must be from 1 to length - 2 = 6, got distances from 7 to 7"),
    (lambda m: TASK.hide(STORY[:8][None], STORY[1:9][None], torch.tensor([1, 2]),
                         torch.Generator()), r"one distance per window, shape \(1,\)"),
])
def test_bad_requests_are_named(call, message):
    with pytest.raises(ValueError, match=message):
        call(LooksBack(TASK, reach=4))


@pytest.mark.parametrize("length", [32, 33, 48, 63, 64, 65, 128, 512])
def test_placements_split_positions_and_distances_by_what_training_saw(length):
    trained = 32
    placements = passkey_placements(trained, length)
    for name, (low, high) in placements.items():
        for distance in range(low, high + 1):
            position = length - 1 - distance
            assert 1 <= position and 1 <= distance <= length - 2
            seen = (position < trained, distance < trained)
            expected = {"trained window": length <= trained,
                        "distance seen, position new": seen == (False, True),
                        "position seen, distance new": seen == (True, False),
                        "both seen, window longer": seen == (True, True) and length > trained,
                        "both new": seen == (False, False)}[name]
            assert expected, (name, distance)
    # Every distance that fits lands in exactly one placement.
    covered = sorted(d for low, high in placements.values() for d in range(low, high + 1))
    assert covered == list(range(1, length - 1))
    assert list(placements) == [name for name in PLACEMENTS if name in placements]


def test_the_placements_of_the_lesson():
    assert passkey_placements(32, 48) == {"distance seen, position new": (1, 15),
                                          "position seen, distance new": (32, 46),
                                          "both seen, window longer": (16, 31)}
    assert passkey_placements(32, 512)["both new"] == (32, 479)
    with pytest.raises(ValueError, match="length must be an integer of at least 3"):
        passkey_placements(32, 2)


def test_grid_counts_right_answers_with_fresh_trials_per_seed():
    task = PasskeyTask(text_vocab_size=20, num_passkeys=4)

    class Oracle(nn.Module):  # names the token right after <key>: always right
        def __init__(self):
            super().__init__()
            self.weight = nn.Parameter(torch.zeros(1))

        def forward(self, ids):
            logits = torch.zeros(*ids.shape, task.vocab_size)
            after_key = (ids == task.key_id).float().argmax(dim=1) + 1
            answer = ids[torch.arange(len(ids)), after_key]
            logits[torch.arange(len(ids)), -1, answer] = 1.0
            return logits

    ids = torch.arange(200) % 20
    found = passkey_grid(Oracle(), task, ids, 8, [8, 20], count=30, seed=1)
    assert set(found) == {(8, "trained window")} | {(20, name) for name in
                                                     passkey_placements(8, 20)}
    assert all(count == 30 for count in found.values())
    first = passkey_windows(task, ids, 20, (1, 7), count=30, seed=1 * 1000 + 10 + 1)
    again = passkey_windows(task, ids, 20, (1, 7), count=30, seed=2 * 1000 + 10 + 1)
    assert not torch.equal(first[0], again[0]), "another seed draws other trials"
