"""TinyGPT: every scheme's shapes, causality, length limits, determinism, and the training loop."""

import pytest
import torch

import helpers
from helpers import POSITION_SCHEMES, TinyGPT, compact_vocabulary, train_tiny_gpt
from helpers.model import random_windows

VOCAB, CONTEXT = 50, 16


def make(position, **kwargs):
    torch.manual_seed(0)
    return TinyGPT(VOCAB, CONTEXT, d_model=32, n_heads=4, n_layers=2, position=position, **kwargs)


@pytest.mark.parametrize("position", POSITION_SCHEMES)
def test_forward_shape(position):
    ids = torch.randint(0, VOCAB, (3, CONTEXT))
    assert make(position)(ids).shape == (3, CONTEXT, VOCAB)


@pytest.mark.parametrize("position", POSITION_SCHEMES)
def test_changing_a_future_token_never_changes_an_earlier_logit(position):
    model = make(position).eval()
    ids = torch.randint(0, VOCAB, (1, CONTEXT))
    changed = ids.clone()
    changed[0, 9] = (ids[0, 9] + 1) % VOCAB
    before, after = model(ids), model(changed)
    assert torch.allclose(before[0, :9], after[0, :9], atol=1e-6)
    assert not torch.allclose(before[0, 9:], after[0, 9:], atol=1e-6)


@pytest.mark.parametrize("position", [p for p in POSITION_SCHEMES if p != "learned"])
def test_longer_than_the_context_works(position):
    ids = torch.randint(0, VOCAB, (2, 4 * CONTEXT))
    assert make(position)(ids).shape == (2, 4 * CONTEXT, VOCAB)


def test_learned_table_refuses_positions_it_has_no_row_for():
    with pytest.raises(ValueError, match=r"rows only for positions 0\.\.15 \(max_len=16\)"):
        make("learned")(torch.randint(0, VOCAB, (1, CONTEXT + 1)))


def last_logits_after_a_swap(model):
    ids = torch.randint(0, VOCAB, (1, 8))
    swapped = ids.clone()
    swapped[0, [1, 5]] = ids[0, [5, 1]]
    return model(ids)[0, -1], model(swapped)[0, -1]


@pytest.mark.parametrize("position", POSITION_SCHEMES)
def test_one_layer_sees_order_only_through_a_position_scheme(position):
    """The last token attends to all tokens: in one layer with no positions it sees the same
    bag of tokens whatever their order."""
    torch.manual_seed(0)
    model = TinyGPT(VOCAB, CONTEXT, d_model=32, n_layers=1, position=position).eval()
    original, swapped = last_logits_after_a_swap(model)
    assert torch.allclose(original, swapped, atol=1e-5) == (position == "none")


def test_two_causal_layers_see_order_even_without_positions():
    """Earlier tokens' first-layer outputs depend on which tokens precede them (the causal
    mask), so from the second layer on even a model with no position scheme sees order."""
    original, swapped = last_logits_after_a_swap(make("none").eval())
    assert not torch.allclose(original, swapped, atol=1e-5)


def test_positions_enter_where_each_scheme_says():
    assert isinstance(make("learned").positions, helpers.LearnedPositionalEmbedding)
    assert isinstance(make("t5").t5_bias, helpers.T5RelativeBias)
    assert not make("t5").t5_bias.bidirectional and make("t5").t5_bias.num_buckets == 32
    assert torch.equal(make("rope").rope_inv_freq, helpers.rope_frequencies(8))
    parameters = {p: sum(t.numel() for t in make(p).parameters()) for p in POSITION_SCHEMES}
    assert parameters["learned"] - parameters["none"] == CONTEXT * 32
    assert parameters["t5"] - parameters["none"] == 32 * 4
    assert parameters["sinusoidal"] == parameters["rope"] == parameters["alibi"] == parameters["none"]


def test_rope_frequencies_can_be_replaced_after_training():
    model = make("rope").eval()
    ids = torch.randint(0, VOCAB, (1, CONTEXT))
    before = model(ids)
    model.set_rope_frequencies(helpers.rope_frequencies(8) / 4)
    assert not torch.allclose(before, model(ids))
    model.set_rope_frequencies(helpers.rope_frequencies(8))
    assert torch.allclose(before, model(ids))
    with pytest.raises(ValueError, match=r"inv_freq must have shape \(4,\)"):
        model.set_rope_frequencies(torch.ones(8))
    with pytest.raises(ValueError, match="not 'rope'"):
        make("alibi").set_rope_frequencies(torch.ones(4))


def test_attention_factor_scales_the_logits_by_its_square():
    """Scaling q and k each by f is the same as dividing the softmax temperature by f²."""
    model = make("rope").eval()
    ids = torch.randint(0, VOCAB, (1, CONTEXT))
    model.set_rope_frequencies(model.rope_inv_freq, attention_factor=1.0)
    plain = model(ids)
    model.set_rope_frequencies(model.rope_inv_freq, attention_factor=1.3)
    assert not torch.allclose(plain, model(ids))


@pytest.mark.parametrize("kwargs,message", [
    (dict(position="absolute"), r"position must be one of .*'absolute'"),
    (dict(d_model=30), r"d_model=30 must be divisible by n_heads=4"),
    (dict(d_model=12), r"head dimension d_model / n_heads = 3 must be even"),
    (dict(n_layers=0), r"n_layers must be a positive integer, got n_layers=0"),
    (dict(context_length=0), r"context_length must be a positive integer, got context_length=0"),
])
def test_bad_settings(kwargs, message):
    settings = dict(vocab_size=VOCAB, context_length=CONTEXT, d_model=32, n_heads=4,
                    position="rope") | kwargs
    with pytest.raises(ValueError, match=message):
        TinyGPT(**settings)


def test_forward_rejects_a_flat_tensor():
    with pytest.raises(ValueError, match=r"expected token ids \[batch, T\]"):
        make("rope")(torch.arange(5))


def test_compact_vocabulary_round_trip():
    ids = [50256, 40, 40, 367, 2885, 367]
    compact, gpt2_id_of = compact_vocabulary(ids)
    assert compact.tolist() == [3, 0, 0, 1, 2, 1]
    assert gpt2_id_of[compact].tolist() == ids


def test_the_story_has_1416_distinct_tokens():
    compact, gpt2_id_of = compact_vocabulary(helpers.gpt2_tokenizer().encode(helpers.load_the_verdict()))
    assert len(gpt2_id_of) == 1416 and int(compact.max()) == 1415


def test_random_windows_are_shifted_pairs_and_reject_short_texts():
    ids = torch.arange(100)
    inputs, targets = random_windows(ids, 10, 4, torch.Generator().manual_seed(0))
    assert inputs.shape == targets.shape == (4, 10)
    assert torch.equal(inputs + 1, targets)
    with pytest.raises(ValueError, match="needs 11"):
        random_windows(torch.arange(10), 10, 4, torch.Generator())


def test_training_is_deterministic_and_lowers_the_loss():
    ids = torch.arange(400) % 7  # a pattern a tiny model learns quickly

    def run():
        model = make("rope")
        history = train_tiny_gpt(model, ids, steps=40, batch_size=8, seed=3, val_ids=ids[:100],
                                 eval_every=20, progress=False)
        return model, history

    (model_a, history_a), (model_b, history_b) = run(), run()
    assert history_a == history_b
    assert all(torch.equal(a, b) for a, b in zip(model_a.state_dict().values(),
                                                 model_b.state_dict().values()))
    assert history_a["step"] == [20, 40] and len(history_a["val"]) == 2
    assert history_a["train"][-1] < history_a["train"][0]


def test_the_device_is_chosen_once_and_can_be_forced(monkeypatch):
    helpers.course_device.cache_clear()
    try:
        monkeypatch.setenv("POSITIONS_DEVICE", "cpu")
        assert helpers.course_device() == torch.device("cpu")
        monkeypatch.setenv("POSITIONS_DEVICE", "cuda")
        assert helpers.course_device() == torch.device("cpu"), "chosen once per process"
        helpers.course_device.cache_clear()
        monkeypatch.setenv("POSITIONS_DEVICE", "a-toaster")
        with pytest.raises(ValueError, match=r"POSITIONS_DEVICE='a-toaster' is not a device"):
            helpers.course_device()
    finally:
        helpers.course_device.cache_clear()


def test_training_leaves_the_model_on_the_course_device():
    model = make("none")
    train_tiny_gpt(model, torch.arange(100) % VOCAB, steps=2, batch_size=2, progress=False)
    assert next(model.parameters()).device == helpers.course_device()


@pytest.mark.parametrize("position", ["alibi", "t5", "rope"])
def test_a_batch_gives_what_each_window_gives_alone(position):
    """The attention mask is expanded to the batch: every window must still get its own."""
    model = make(position).eval()
    ids = torch.randint(0, VOCAB, (3, 2 * CONTEXT))
    together = model(ids)
    for row in range(3):
        assert torch.allclose(together[row], model(ids[row:row + 1])[0], atol=1e-5)


def test_rope_scaling_sets_fixed_frequencies_or_follows_the_length():
    model = make("rope").eval()
    ids = torch.randint(0, VOCAB, (1, 4 * CONTEXT))
    model.set_rope_scaling({"rope_type": "linear", "factor": 4.0})
    assert torch.allclose(model.rope_inv_freq, helpers.rope_frequencies(8) / 4)
    linear = model(ids)
    dynamic = {"rope_type": "dynamic", "factor": 4.0, "original_max_position_embeddings": CONTEXT}
    model.set_rope_scaling(dynamic)
    # Up to the original length dynamic NTK changes nothing; beyond, it uses the frequencies
    # for the length of the input it is given.
    model_short = make("rope").eval()
    assert torch.allclose(model(ids[:, :CONTEXT]), model_short(ids[:, :CONTEXT]), atol=1e-6)
    by_hand = make("rope").eval()
    by_hand.set_rope_frequencies(helpers.rope_inv_freq(8, scaling=dynamic, seq_len=4 * CONTEXT)[0])
    assert torch.allclose(model(ids), by_hand(ids), atol=1e-6)
    assert not torch.allclose(model(ids), linear, atol=1e-3)
    model.set_rope_scaling(None)
    assert torch.allclose(model(ids), model_short(ids), atol=1e-6)
    with pytest.raises(ValueError, match="not 'rope'"):
        make("alibi").set_rope_scaling({"rope_type": "linear", "factor": 2.0})


def test_training_with_a_game_reports_both_losses():
    from helpers.retrieval import PasskeyTask

    task = PasskeyTask(VOCAB - 12, num_passkeys=10)
    assert task.vocab_size == VOCAB
    history = train_tiny_gpt(make("alibi"), torch.arange(300) % (VOCAB - 12), steps=20,
                             batch_size=8, task=task, eval_every=10, progress=False)
    assert set(history) == {"step", "train", "val", "task"} and len(history["task"]) == 2
    assert all(loss > 0 for loss in history["train"] + history["task"])


def test_a_game_with_no_questions_adds_nothing():
    from helpers.model import _story_and_game_losses

    logits = torch.randn(2, 5, VOCAB)
    targets = torch.randint(0, VOCAB, (2, 5))
    story, game = _story_and_game_losses(logits, targets, torch.full((2,), -100))
    assert story == pytest.approx(torch.nn.functional.cross_entropy(
        logits.flatten(0, 1), targets.flatten()).item()) and game == 0


def test_attention_bias_gives_each_scheme_its_bias_and_none_otherwise():
    device = torch.device("cpu")
    assert torch.equal(make("alibi").attention_bias(7, device), helpers.alibi_bias(4, 7))
    t5 = make("t5")
    assert torch.equal(t5.attention_bias(7, device), t5.t5_bias(7))
    for position in ("none", "learned", "sinusoidal", "rope"):
        assert make(position).attention_bias(7, device) is None


class OnlyItself(TinyGPT):
    """A subclass whose bias lets each query attend to its own key alone."""

    def attention_bias(self, length, device):
        return torch.zeros(self.n_heads, length, length, device=device).masked_fill(
            ~torch.eye(length, dtype=torch.bool, device=device), float("-inf"))


def test_a_subclass_bias_reaches_every_layer():
    """With attention restricted to the token itself, no earlier token can change a logit;
    the plain model with no positions does see earlier tokens (two causal layers)."""
    torch.manual_seed(0)
    model = OnlyItself(vocab_size=VOCAB, context_length=CONTEXT, position="none").eval()
    ids = torch.randint(0, VOCAB, (1, 6))
    changed = ids.clone()
    changed[0, 0] = (ids[0, 0] + 1) % VOCAB
    with torch.no_grad():
        assert torch.equal(model(ids)[0, 1:], model(changed)[0, 1:])
        plain = TinyGPT(vocab_size=VOCAB, context_length=CONTEXT, position="none").eval()
        plain.load_state_dict(model.state_dict())
        assert not torch.allclose(plain(ids)[0, 1:], plain(changed)[0, 1:])


def test_t5_reach_is_an_argument():
    """07 trains T5 with a reach of 32 (its training length): every distance 0..31 gets a bucket
    that training sees, and everything beyond shares bucket 31."""
    model = TinyGPT(vocab_size=10, context_length=32, position="t5", t5_max_distance=32)
    assert model.t5_bias.max_distance == 32
    assert TinyGPT(vocab_size=10, context_length=32, position="t5").t5_bias.max_distance == 128
    with pytest.raises(ValueError, match="max_distance must be larger than the exact range"):
        TinyGPT(vocab_size=10, context_length=32, position="t5", t5_max_distance=16)


@pytest.mark.parametrize("scheme", POSITION_SCHEMES)
def test_logits_to_keep_gives_the_last_rows_only(scheme):
    """As Hugging Face's argument: 0 keeps every position, n the last n (same values)."""
    torch.manual_seed(0)
    model = TinyGPT(vocab_size=30, context_length=16, position=scheme).eval()
    ids = torch.randint(0, 30, (2, 16))
    with torch.no_grad():
        full = model(ids)
        assert torch.equal(model(ids, logits_to_keep=0), full)
        last = model(ids, logits_to_keep=3)
    assert last.shape == (2, 3, 30) and torch.allclose(last, full[:, -3:], atol=1e-6)
    for bad in (-1, 1.5, True):
        with pytest.raises(ValueError, match="logits_to_keep must be 0"):
            model(ids, logits_to_keep=bad)
