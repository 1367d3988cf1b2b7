"""The checks of notebook 07's exercises: right answers in several forms pass; each typical
mistake, the forbidden shortcut and a bad type get their own sentence; nothing raises."""

import math

import pytest
import torch
from torch import nn

from helpers import TinyGPT, train_tiny_gpt
from helpers.evaluation import non_overlapping_loss, sliding_window_loss
from helpers.exercises import compare as checks

torch.set_num_threads(1)


def verdict(capsys, check, *answer):
    """(returned verdict, printed line); the check must never raise."""
    result = check(*answer)
    return result, capsys.readouterr().out


# --------------------------------------------------------------------------------------------
# 1. KERPLE's bias in a TinyGPT subclass
# --------------------------------------------------------------------------------------------

class Kerple(TinyGPT):
    """The solution's form: clamped inside the formula, log1p, a clamped distance."""

    def __init__(self, vocab_size, context_length, **kwargs):
        super().__init__(vocab_size, context_length, position="none", **kwargs)
        self.r1 = nn.Parameter(2 * torch.rand(self.n_heads))
        self.r2 = nn.Parameter(torch.rand(self.n_heads))

    def distance(self, length, device):
        positions = torch.arange(length, device=device)
        return (positions[:, None] - positions[None, :]).clamp(min=0)

    def attention_bias(self, length, device):
        r1 = self.r1.clamp(min=0.01)[:, None, None]
        r2 = self.r2.clamp(min=0.01)[:, None, None]
        return -r1 * torch.log1p(r2 * self.distance(length, device))


class KerpleInPlace(Kerple):
    """The reference code's form: parameters clamped in place, |i - j|, torch.log(1 + ...)."""

    def attention_bias(self, length, device):
        self.r1.data.clamp_(min=0.01)
        self.r2.data.clamp_(min=0.01)
        positions = torch.arange(length, device=device)
        distance = (positions[:, None] - positions[None, :]).abs()
        return -self.r1[:, None, None] * torch.log(1 + self.r2[:, None, None] * distance)


class KerpleLoop(Kerple):
    """One head at a time, in float64, with a leading batch dimension of 1."""

    def attention_bias(self, length, device):
        distance = self.distance(length, device).double()
        heads = [-self.r1[h].clamp(min=0.01).double()
                 * torch.log(1 + self.r2[h].clamp(min=0.01).double() * distance)
                 for h in range(self.n_heads)]
        return torch.stack(heads)[None].float()


@pytest.mark.parametrize("answer", [Kerple, KerpleInPlace, KerpleLoop])
def test_kerple_right_answers_in_any_form(capsys, answer):
    ok, out = verdict(capsys, checks.check_kerple_model, answer)
    assert ok and out.startswith("Correct: "), out


def with_bias(formula):
    """A Kerple subclass whose bias is `formula(r1, r2, distance)` (r1, r2 clamped, [H,1,1])."""
    class Variant(Kerple):
        def attention_bias(self, length, device):
            r1 = self.r1.clamp(min=0.01)[:, None, None]
            r2 = self.r2.clamp(min=0.01)[:, None, None]
            return formula(r1, r2, self.distance(length, device).float())
    return Variant


def j_minus_i(length):
    positions = torch.arange(length).float()
    return positions[None, :] - positions[:, None]


class Unclamped(Kerple):
    def attention_bias(self, length, device):
        return -self.r1[:, None, None] * torch.log1p(self.r2[:, None, None]
                                                     * self.distance(length, device))


class Softplus(Kerple):
    def attention_bias(self, length, device):
        r1 = nn.functional.softplus(self.r1)[:, None, None]
        r2 = nn.functional.softplus(self.r2)[:, None, None]
        return -r1 * torch.log1p(r2 * self.distance(length, device))


class OneForAllHeads(Kerple):
    def attention_bias(self, length, device):
        return -self.r1.clamp(min=0.01)[0] * torch.log1p(
            self.r2.clamp(min=0.01)[0] * self.distance(length, device))


class Detached(Kerple):
    def attention_bias(self, length, device):
        r1 = torch.tensor(self.r1.clamp(min=0.01).tolist())[:, None, None]
        r2 = torch.tensor(self.r2.clamp(min=0.01).tolist())[:, None, None]
        return -r1 * torch.log1p(r2 * self.distance(length, device))


class PlainTensors(Kerple):
    def __init__(self, vocab_size, context_length, **kwargs):
        super().__init__(vocab_size, context_length, **kwargs)
        del self.r1, self.r2
        self.r1 = torch.rand(self.n_heads)
        self.r2 = torch.rand(self.n_heads)


class ScalarValues(Kerple):
    def __init__(self, vocab_size, context_length, **kwargs):
        super().__init__(vocab_size, context_length, **kwargs)
        self.r1 = nn.Parameter(torch.tensor(1.0))


class OnAlibi(Kerple):
    def __init__(self, vocab_size, context_length, **kwargs):
        TinyGPT.__init__(self, vocab_size, context_length, position="alibi", **kwargs)
        self.r1 = nn.Parameter(torch.rand(self.n_heads))
        self.r2 = nn.Parameter(torch.rand(self.n_heads))


class FixedArguments(Kerple):
    def __init__(self, vocab_size, context_length):
        super().__init__(vocab_size, context_length)


class NoOverride(TinyGPT):
    def __init__(self, vocab_size, context_length, **kwargs):
        super().__init__(vocab_size, context_length, position="none", **kwargs)
        self.r1 = nn.Parameter(torch.rand(self.n_heads))
        self.r2 = nn.Parameter(torch.rand(self.n_heads))


class UnclampedDistance(Kerple):
    """Right below the diagonal, NaN above it: a finite forward pass, a NaN gradient."""

    def attention_bias(self, length, device):
        positions = torch.arange(length, device=device)
        distance = positions[:, None] - positions[None, :]
        return -self.r1.clamp(min=0.01)[:, None, None] * torch.log1p(
            self.r2.clamp(min=0.01)[:, None, None] * distance)


class UsesTheCheck(Kerple):
    """The check's own answer, with a fake gradient glued on."""

    def attention_bias(self, length, device):
        bias = checks._kerple_bias(self.r1, self.r2, length).float()
        return bias + ((self.r1 - self.r1.detach()) + (self.r2 - self.r2.detach()))[:, None, None]


class GluedGradient(Kerple):
    """The right values, detached, with a gradient that is not KERPLE's."""

    def attention_bias(self, length, device):
        bias = Kerple.attention_bias(self, length, device).detach()
        return bias + ((self.r1 - self.r1.detach()) + (self.r2 - self.r2.detach()))[:, None, None]


class Cached(Kerple):
    def attention_bias(self, length, device):
        if getattr(self, "cache", None) is None or self.cache.shape[-1] != length:
            self.cache = Kerple.attention_bias(self, length, device).detach()
        return self.cache


class SameParameter(Kerple):
    def __init__(self, vocab_size, context_length, **kwargs):
        super().__init__(vocab_size, context_length, **kwargs)
        self.r2 = self.r1


class TupleForward(Kerple):
    def forward(self, ids):
        return super().forward(ids), None


class Stub(Kerple):
    def attention_bias(self, length, device):
        return None


class Crashes(Kerple):
    def attention_bias(self, length, device):
        return self.r3


@pytest.mark.parametrize("answer,words", [
    (with_bias(lambda a, b, d: a * torch.log1p(b * d)), "the sign is flipped"),
    (with_bias(lambda a, b, d: -b * torch.log1p(a * d)), "r1 and r2 are swapped"),
    (with_bias(lambda a, b, d: -a * torch.log1p(d)), "r2 is missing inside the logarithm"),
    (with_bias(lambda a, b, d: -a * b * d), "ALiBi's shape"),
    (with_bias(lambda a, b, d: -a * torch.log10(1 + b * d)), "base 10"),
    (with_bias(lambda a, b, d: -a * torch.log2(1 + b * d)), "base 2"),
    (with_bias(lambda a, b, d: -a * torch.log(b * d)), "log(0)"),
    (with_bias(lambda a, b, d: -a * torch.log(1 + b * j_minus_i(d.shape[-1]))), "NaN below"),
    (with_bias(lambda a, b, d: -a * torch.log1p(b * j_minus_i(d.shape[-1]).clamp(min=0))),
     "below the diagonal"),
    (with_bias(lambda a, b, d: -a * torch.log1p(b * d) + 1), "plus a constant for each query"),
    (with_bias(lambda a, b, d: -a * torch.log1p(b * d) + 0.1 * d), "expected −r1·log"),
    (UnclampedDistance, "NaN gradient"),
    (UsesTheCheck, "write it yourself"),
    (GluedGradient, "not the right gradient"),
    (Cached, "did not change when r1 and r2 did"),
    (SameParameter, "the same parameter"),
    (TupleForward, "Leave forward to TinyGPT"),
    (OneForAllHeads, "one bias for every head"),
    (with_bias(lambda a, b, d: (-a * torch.log1p(b * d))[:, :-1]), "has shape"),
    (Unclamped, "Clamp both at 0.01"),
    (Softplus, "no softplus"),
    (Detached, "no gradient"),
    (PlainTensors, "not an nn.Parameter"),
    (ScalarValues, "one value per head"),
    (OnAlibi, "position='alibi'"),
    (FixedArguments, "raised TypeError"),
    (NoOverride, "does not override attention_bias"),
    (Crashes, "raised AttributeError"),
])
def test_kerple_typical_mistakes(capsys, answer, words):
    ok, out = verdict(capsys, checks.check_kerple_model, answer)
    assert not ok and out.startswith("Not yet: ") and words in out, out


def test_the_kerple_check_leaves_the_learners_random_state_alone(capsys):
    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    assert verdict(capsys, checks.check_kerple_model, Kerple)[0]
    assert torch.equal(torch.rand(3), expected)


def test_each_kerple_variant_really_differs_from_kerple():
    r1, r2 = torch.tensor([0.3, 1.5, 2.7]), torch.tensor([0.06, 0.7, 1.9])
    right = checks._kerple_bias(r1, r2, 20)
    for why, variant in checks._kerple_variants(r1, r2, 20).items():
        assert not torch.allclose(checks._lower(variant), checks._lower(right), rtol=1e-3), why


@pytest.mark.parametrize("answer,start,words", [
    (None, "Not done yet: ", "replace None"),
    (Stub, "Not done yet: ", "returns None"),
    (Kerple(20, 8), "Not yet: ", "the class KerpleGPT itself"),
    ("KerpleGPT", "Not yet: ", "the class KerpleGPT itself"),
    (nn.Module, "Not yet: ", "subclass of TinyGPT"),
    (lambda *a, **k: None, "Not yet: ", "the class KerpleGPT itself"),
])
def test_kerple_bad_answers_get_a_sentence(capsys, answer, start, words):
    ok, out = verdict(capsys, checks.check_kerple_model, answer)
    assert not ok and out.startswith(start) and words in out, out


def test_the_kerple_bias_is_zero_at_distance_zero_and_clamped():
    bias = checks._kerple_bias(torch.tensor([-1.0, 2.0]), torch.tensor([0.5, -3.0]), 4)
    assert bias.shape == (2, 4, 4)
    assert torch.equal(bias.diagonal(dim1=1, dim2=2), torch.zeros(2, 4))
    assert math.isclose(bias[0, 3, 0].item(), -0.01 * math.log(1 + 0.5 * 3))
    assert math.isclose(bias[1, 2, 0].item(), -2.0 * math.log(1 + 0.01 * 2))


# --------------------------------------------------------------------------------------------
# 2. KERPLE in the grid
# --------------------------------------------------------------------------------------------

VOCAB, CONTEXT = 12, 8
SETTINGS = dict(vocab_size=VOCAB, context_length=CONTEXT, d_model=16, n_heads=2, n_layers=1)
# A text a tiny model half learns in a few dozen steps: 50 random tokens, repeated.
TEXT = torch.randint(0, VOCAB, (50,), generator=torch.Generator().manual_seed(0)).repeat(30)


def trained(seed, model_class=Kerple, steps=150):
    torch.manual_seed(seed)
    model = model_class(**SETTINGS)
    train_tiny_gpt(model, TEXT, steps=steps, batch_size=8, learning_rate=1e-2, seed=seed,
                   progress=False)
    return model


def section_6(model, length=checks.EVALUATION_LENGTH):
    return sliding_window_loss(model, TEXT, length, stride=length // 4, max_windows=16)


@pytest.fixture(scope="module")
def models():
    return [trained(seed) for seed in (0, 1, 2)]


def lesson(alibi_runs):
    """Section 6's by_evaluation, with ALiBi's sliding-window runs."""
    return {checks.SLIDING: {"alibi": alibi_runs}, "non-overlapping windows": {}}


@pytest.fixture(scope="module")
def alibi():
    return lesson([{checks.EVALUATION_LENGTH: section_6(trained(seed, lambda **k: TinyGPT(
        position="alibi", **k)))} for seed in (0, 1)])


def test_the_tiny_models_learn_the_pattern(models):
    losses = [section_6(model) for model in models]
    assert all(loss < 0.8 * math.log(VOCAB) for loss in losses), losses


@pytest.mark.parametrize("form", [float, torch.tensor, lambda x: torch.tensor([x])])
def test_grid_right_answers_in_any_form(capsys, models, alibi, form):
    runs = {"kerple": [(model, form(section_6(model))) for model in models]}
    ok, out = verdict(capsys, checks.check_kerple_in_grid, runs, TEXT, SETTINGS, alibi)
    assert ok and out.startswith("Correct: ") and "3 seeds" in out and "ALiBi" in out, out
    # Two seeds and a list of lists are enough too.
    runs = {"kerple": [[model, section_6(model)] for model in models[:2]]}
    assert verdict(capsys, checks.check_kerple_in_grid, runs, TEXT, SETTINGS, alibi)[0]


def test_grid_says_whether_the_seeds_separate_the_schemes(capsys, models):
    runs = {"kerple": [(model, section_6(model)) for model in models]}
    far_worse = [{checks.EVALUATION_LENGTH: 2.0}, {checks.EVALUATION_LENGTH: 2.2}]
    out = verdict(capsys, checks.check_kerple_in_grid, runs, TEXT, SETTINGS, lesson(far_worse))[1]
    assert "KERPLE is better here, beyond the seeds' spread" in out
    losses = [section_6(model) for model in models]
    overlapping = [{checks.EVALUATION_LENGTH: min(losses)}, {checks.EVALUATION_LENGTH: 9.0}]
    out = verdict(capsys, checks.check_kerple_in_grid, runs, TEXT, SETTINGS, lesson(overlapping))[1]
    assert "do not separate" in out


def test_grid_typical_mistakes(capsys, models, alibi):
    def check(runs):
        ok, out = verdict(capsys, checks.check_kerple_in_grid, runs, TEXT, SETTINGS, alibi)
        assert not ok and out.startswith("Not yet: "), out
        return out

    same_seed = [(models[0], section_6(models[0]))] * 3
    assert "the seed never reached the model" in check({"kerple": same_seed})
    copy = trained(0)
    assert "runs 0 and 1 hold the same weights" in check(
        {"kerple": [(models[0], section_6(models[0])), (copy, section_6(copy))]})
    untrained = [_untrained(seed) for seed in (0, 1)]
    assert "undertrained" in check({"kerple": [(m, section_6(m)) for m in untrained]})
    non_overlapping = [(m, non_overlapping_loss(m, TEXT, checks.EVALUATION_LENGTH,
                                                max_windows=16)) for m in models]
    assert "the non-overlapping loss" in check({"kerple": non_overlapping})
    at_32 = [(m, section_6(m, 32)) for m in models]
    assert "the loss at the trained length" in check({"kerple": at_32})
    every_window = [(m, sliding_window_loss(m, TEXT, checks.EVALUATION_LENGTH,
                                            stride=checks.EVALUATION_LENGTH // 4))
                    for m in models]
    assert "max_windows=16" in check({"kerple": every_window})
    assert "reports 1.2340 nats" in check({"kerple": [(m, 1.234) for m in models]})
    plain = [trained(seed, lambda **k: TinyGPT(position="alibi", **k)) for seed in (0, 1)]
    assert "plain TinyGPT" in check({"kerple": [(m, section_6(m)) for m in plain]})
    assert "one run cannot show" in check({"kerple": [(models[0], 0.1)]})


def _untrained(seed):
    torch.manual_seed(seed)
    return Kerple(**SETTINGS).eval()


@pytest.mark.parametrize("answer,start,words", [
    (None, "Not done yet: ", "replace None"),
    (lambda scheme, seed: None, "Not yet: ", "not the experiment function"),
    ([1, 2, 3], "Not yet: ", "got list"),
    ({"alibi": []}, "Not yet: ", "with keys ['alibi']"),
    ({"kerple": [1, 2]}, "Not yet: ", "a pair (model, loss)"),
    ({"kerple": [("model", 0.1), ("model", 0.2)]}, "Not yet: ", "returned str"),
])
def test_grid_bad_answers_get_a_sentence(capsys, alibi, answer, start, words):
    ok, out = verdict(capsys, checks.check_kerple_in_grid, answer, TEXT, SETTINGS, alibi)
    assert not ok and out.startswith(start) and words in out, out


def test_grid_bad_losses_and_alibi_get_a_sentence(capsys, models, alibi):
    out = verdict(capsys, checks.check_kerple_in_grid,
                  {"kerple": [(m, "low") for m in models]}, TEXT, SETTINGS, alibi)[1]
    assert "expected a number" in out
    runs = {"kerple": [(m, section_6(m)) for m in models]}
    for settings, by_evaluation in [(SETTINGS, {"alibi": 0.3}), (None, alibi),
                                    (SETTINGS, lesson([{32: 0.2}]))]:
        out = verdict(capsys, checks.check_kerple_in_grid, runs, TEXT, settings, by_evaluation)[1]
        assert "pass section 3's `settings` and section 6's `by_evaluation`" in out
    for ids in (None, TEXT.float(), TEXT[:50], "text"):
        out = verdict(capsys, checks.check_kerple_in_grid, runs, ids, SETTINGS, alibi)[1]
        assert "pass the lesson's train_ids" in out


def test_grid_refuses_models_that_are_not_exercise_1s_kerple(capsys, models, alibi):
    def check(runs):
        ok, out = verdict(capsys, checks.check_kerple_in_grid, runs, TEXT, SETTINGS, alibi)
        assert not ok and out.startswith("Not yet: "), out
        return out

    for wrong in (NoOverride, with_bias(lambda a, b, d: a * torch.log1p(b * d))):
        runs = [(m, section_6(m)) for m in (trained(0, wrong), trained(1, wrong))]
        assert "does not add KERPLE's bias" in check({"kerple": runs})
    bigger = dict(SETTINGS, context_length=2 * CONTEXT)
    runs = []
    for seed in (0, 1):
        torch.manual_seed(seed)
        model = Kerple(**bigger)
        train_tiny_gpt(model, TEXT, steps=150, batch_size=8, learning_rate=1e-2, seed=seed,
                       progress=False)
        runs.append((model, section_6(model)))
    assert f"context_length={2 * CONTEXT}, where section 3's settings say {CONTEXT}" in check(
        {"kerple": runs})
    short = [trained(seed, steps=10) for seed in (0, 1)]
    assert "undertrained" in check({"kerple": [(m, section_6(m)) for m in short]})
    history = {"step": [1], "train": [0.5], "val": []}
    assert "(model, history)" in check({"kerple": [(m, history) for m in models]})
    assert "no runs" in check({"kerple": []})


def test_grid_accepts_a_numpy_loss(capsys, models, alibi):
    import numpy as np
    runs = {"kerple": [(m, np.array([section_6(m)])) for m in models]}
    assert verdict(capsys, checks.check_kerple_in_grid, runs, TEXT, SETTINGS, alibi)[0]
