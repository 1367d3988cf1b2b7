"""The checks of notebook 07's exercises: right answers in several forms pass; each typical
mistake, the forbidden shortcut and a bad type get their own sentence; nothing raises."""

import math

import numpy as np
import pytest
import torch
from torch import nn

from helpers import TinyGPT, train_tiny_gpt
from helpers.evaluation import non_overlapping_loss, sliding_window_loss
from helpers.exercises import compare as checks
from helpers.retrieval import PasskeyTask

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


class TiedStorage(Kerple):
    def __init__(self, vocab_size, context_length, **kwargs):
        super().__init__(vocab_size, context_length, **kwargs)
        self.r2 = nn.Parameter(self.r1.data)


class InADict(TinyGPT):
    """Right values, but held in a ParameterDict and shown through properties."""

    def __init__(self, vocab_size, context_length, **kwargs):
        super().__init__(vocab_size, context_length, position="none", **kwargs)
        self.kerple = nn.ParameterDict({"a": nn.Parameter(torch.rand(self.n_heads)),
                                        "b": nn.Parameter(torch.rand(self.n_heads))})

    r1 = property(lambda self: self.kerple["a"])
    r2 = property(lambda self: self.kerple["b"])

    def attention_bias(self, length, device):
        return Kerple.attention_bias(self, length, device)

    distance = Kerple.distance


def clamped_with(clamp_r1, clamp_r2):
    return with_bias_raw(lambda r1, r2, d: -clamp_r1(r1)[:, None, None]
                         * torch.log1p(clamp_r2(r2)[:, None, None] * d))


def with_bias_raw(formula):
    """A Kerple subclass whose bias is `formula(r1, r2, distance)` with r1, r2 unclamped."""
    class Variant(Kerple):
        def attention_bias(self, length, device):
            return formula(self.r1, self.r2, self.distance(length, device).float())
    return Variant


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
    (TiedStorage, "share its storage"),
    (InADict, "registered under another name"),
    (clamped_with(lambda r: r.clamp(min=0.01), lambda r: r), "only r1 is clamped"),
    (clamped_with(lambda r: r, lambda r: r.clamp(min=0.01)), "only r2 is clamped"),
    (clamped_with(lambda r: r.clamp(min=0), lambda r: r.clamp(min=0)), "clamped at 0 rather"),
    (clamped_with(torch.abs, torch.abs), ".abs() turns -0.5 into 0.5"),
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

VOCAB, CONTEXT, SEEDS = 12, 8, [0, 1, 2]
TASK = PasskeyTask(text_vocab_size=VOCAB, num_passkeys=4)
SETTINGS = dict(vocab_size=TASK.vocab_size, context_length=CONTEXT, d_model=16, n_heads=2,
                n_layers=1)
BUDGET = dict(steps=150, batch_size=8, learning_rate=1e-2)
# A text a tiny model half learns in a few dozen steps: 50 random tokens, repeated.
TEXT = torch.randint(0, VOCAB, (50,), generator=torch.Generator().manual_seed(0)).repeat(30)


def trained(seed, model_class=Kerple, seeded=True, **changes):
    """Section 4's recipe for the tiny setting; `changes` alter the training call."""
    if seeded:
        torch.manual_seed(seed)
    model = model_class(**SETTINGS)
    train_tiny_gpt(model, TEXT, **(dict(seed=seed, task=TASK, progress=False, **BUDGET)
                                   | changes))
    return model


def section_7(model, length=checks.EVALUATION_LENGTH):
    return sliding_window_loss(model, TEXT, length, stride=length // 4, max_windows=16)


def runs_of(models):
    return {"kerple": [(model, section_7(model)) for model in models]}


@pytest.fixture(scope="module")
def models():
    return [trained(seed) for seed in SEEDS]


def by_evaluation(alibi_runs):
    """Section 7's by_evaluation, with ALiBi's sliding-window runs."""
    return {checks.SLIDING: {"alibi": alibi_runs}, "non-overlapping windows": {}}


@pytest.fixture(scope="module")
def lesson():
    alibi = [{checks.EVALUATION_LENGTH: section_7(trained(seed, lambda **k: TinyGPT(
        position="alibi", **k)))} for seed in SEEDS]
    return dict(train_ids=TEXT, settings=SETTINGS, budget=BUDGET, task=TASK, seeds=SEEDS,
                by_evaluation=by_evaluation(alibi))


def grid(capsys, runs, lesson, **changes):
    """(verdict, printed line) of the grid check; it must never raise."""
    result = checks.check_kerple_in_grid(runs, **(lesson | changes))
    return result, capsys.readouterr().out


def test_the_tiny_models_learn_the_pattern(models):
    losses = [section_7(model, CONTEXT) for model in models]
    assert all(loss < 0.8 * math.log(VOCAB) for loss in losses), losses


@pytest.mark.parametrize("form", [float, torch.tensor, lambda x: torch.tensor([x]),
                                  lambda x: np.array([x])])
def test_grid_right_answers_in_any_form(capsys, models, lesson, form):
    runs = {"kerple": [(model, form(section_7(model))) for model in models]}
    ok, out = grid(capsys, runs, lesson)
    assert ok and out.startswith("Correct: ") and "3 seeds" in out and "ALiBi" in out, out
    # A list of lists, and two seeds, are fine too.
    runs = {"kerple": [[model, section_7(model)] for model in models[:2]]}
    assert grid(capsys, runs, lesson, seeds=SEEDS[:2])[0]


def test_grid_says_whether_the_seeds_separate_the_schemes(capsys, models, lesson):
    far_worse = by_evaluation([{checks.EVALUATION_LENGTH: 9.0}, {checks.EVALUATION_LENGTH: 9.1}])
    out = grid(capsys, runs_of(models), lesson, by_evaluation=far_worse)[1]
    assert "95% intervals do not overlap: KERPLE is better here" in out
    losses = [section_7(model) for model in models]
    overlapping = by_evaluation([{checks.EVALUATION_LENGTH: min(losses)},
                                 {checks.EVALUATION_LENGTH: 9.0}])
    out = grid(capsys, runs_of(models), lesson, by_evaluation=overlapping)[1]
    assert "do not separate" in out


def test_grid_typical_mistakes(capsys, models, lesson):
    def check(runs, **changes):
        ok, out = grid(capsys, runs, lesson, **changes)
        assert not ok and out.startswith("Not yet: "), out
        return out

    same_seed = {"kerple": [(models[0], section_7(models[0]))] * 3}
    assert "the seed never reached the model" in check(same_seed)
    assert "runs 0 and 1 hold the same weights" in check(runs_of([models[0], trained(0),
                                                                  models[2]]))
    recipe = "is not what section 2's recipe gives"
    assert recipe in check(runs_of([trained(s, steps=100) for s in SEEDS]))
    assert recipe in check(runs_of([trained(s, learning_rate=3e-3) for s in SEEDS]))
    assert recipe in check(runs_of([trained(s, seeded=False) for s in SEEDS]))
    assert recipe in check(runs_of([_untrained(seed) for seed in SEEDS]))
    no_task = check(runs_of([trained(s, task=None) for s in SEEDS]))
    assert recipe in no_task and "trained without task=task" in no_task
    non_overlapping = {"kerple": [(m, non_overlapping_loss(m, TEXT, checks.EVALUATION_LENGTH,
                                                           max_windows=16)) for m in models]}
    assert "the non-overlapping loss" in check(non_overlapping)
    at_32 = {"kerple": [(m, section_7(m, 32)) for m in models]}
    assert "the loss at the trained length" in check(at_32)
    every_window = {"kerple": [(m, sliding_window_loss(m, TEXT, checks.EVALUATION_LENGTH,
                                                       stride=checks.EVALUATION_LENGTH // 4))
                               for m in models]}
    assert "max_windows=16" in check(every_window)
    assert "reports 1.2340 nats" in check({"kerple": [(m, 1.234) for m in models]})
    history = {"step": [1], "train": [0.5], "val": []}
    assert "(model, history)" in check({"kerple": [(m, history) for m in models]})
    assert "no runs" in check({"kerple": []})
    assert "2 runs for 3 seeds" in check(runs_of(models[:2]))


def _untrained(seed):
    torch.manual_seed(seed)
    return Kerple(**SETTINGS).eval()


class ScalarR1(Kerple):
    def __init__(self, vocab_size, context_length, **kwargs):
        super().__init__(vocab_size, context_length, **kwargs)
        self.r1 = nn.Parameter(torch.tensor(1.0))

    def attention_bias(self, length, device):
        return -self.r1.clamp(min=0.01) * torch.log1p(
            self.r2.clamp(min=0.01)[:, None, None] * self.distance(length, device))


def test_grid_refuses_models_that_are_not_exercise_1s_kerple(capsys, lesson):
    def check(models):
        ok, out = grid(capsys, runs_of(models), lesson)
        assert not ok and out.startswith("Not yet: "), out
        return out

    for wrong in (NoOverride, ScalarR1, with_bias(lambda a, b, d: a * torch.log1p(b * d))):
        assert "does not add KERPLE's bias" in check([trained(s, wrong) for s in SEEDS[:3]])
    plain = [trained(s, lambda **k: TinyGPT(position="alibi", **k)) for s in SEEDS]
    assert "plain TinyGPT without r1 and r2" in check(plain)
    assert "position='alibi'" in check([trained(s, OnAlibi) for s in SEEDS])
    bigger = []
    for seed in SEEDS:
        torch.manual_seed(seed)
        model = Kerple(**dict(SETTINGS, context_length=2 * CONTEXT))
        train_tiny_gpt(model, TEXT, seed=seed, task=TASK, progress=False, **BUDGET)
        bigger.append(model)
    assert f"context_length={2 * CONTEXT}, where section 2's settings say {CONTEXT}" in check(
        bigger)


def test_grid_follows_the_model_to_its_device(capsys, models, lesson, monkeypatch):
    """On a GPU runtime the models live there: the bias is asked for on their device."""
    asked = []
    original = Kerple.attention_bias

    def recording(self, length, device):
        asked.append(torch.device(device))
        return original(self, length, device)

    monkeypatch.setattr(Kerple, "attention_bias", recording)
    assert grid(capsys, runs_of(models), lesson)[0]
    assert asked and all(device == next(models[0].parameters()).device for device in asked)


@pytest.mark.parametrize("answer,start,words", [
    (None, "Not done yet: ", "replace None"),
    (lambda scheme, seed: None, "Not yet: ", "not the experiment function"),
    ([1, 2, 3], "Not yet: ", "got list"),
    ({"alibi": []}, "Not yet: ", "with keys ['alibi']"),
    ({"kerple": [1, 2]}, "Not yet: ", "a pair (model, loss)"),
    ({"kerple": [("model", 0.1), ("model", 0.2), ("model", 0.3)]}, "Not yet: ", "returned str"),
])
def test_grid_bad_answers_get_a_sentence(capsys, lesson, answer, start, words):
    ok, out = grid(capsys, answer, lesson)
    assert not ok and out.startswith(start) and words in out, out


def test_grid_bad_losses_and_lesson_objects_get_a_sentence(capsys, models, lesson):
    out = grid(capsys, {"kerple": [(m, "low") for m in models]}, lesson)[1]
    assert "expected a number" in out
    runs = runs_of(models)
    for changes in [dict(by_evaluation={"alibi": 0.3}), dict(settings=None),
                    dict(by_evaluation=by_evaluation([{32: 0.2}])),
                    dict(by_evaluation=by_evaluation([])), dict(budget=None),
                    dict(task="task"), dict(seeds=[0])]:
        out = grid(capsys, runs, lesson, **changes)[1]
        assert "pass the lesson's own settings, budget, task, seeds and by_evaluation" in out, (
            changes, out)
    for ids in (None, TEXT.float(), TEXT[:50], "text"):
        out = grid(capsys, runs, lesson, train_ids=ids)[1]
        assert "pass the lesson's train_ids" in out
