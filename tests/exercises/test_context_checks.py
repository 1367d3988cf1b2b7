"""The checks of notebook 08's exercises: right answers in several forms pass; each typical
mistake, the forbidden shortcut and a bad type get their own sentence; nothing raises."""

import copy
import functools
import math
import random
import sys
import types

import numpy as np
import pytest
import torch

import helpers
from helpers.exercises import context as checks

# Bound at import, as a learner's `from helpers... import ...` cell binds them in the notebook.
# (Only under another name: a global named rope_inv_freq would make `helpers.rope_inv_freq(...)`
# look like a call of the bound name, and the call-time refusal would go untested.)
from helpers import rope_frequencies  # noqa: E402
from helpers.rope_scaling import rope_inv_freq as course_inv_freq  # noqa: E402

torch.set_num_threads(1)


def verdict(capsys, check, answer):
    """(returned verdict, printed output); the check must never raise."""
    result = check(answer)
    return result, capsys.readouterr().out


def accepted(capsys, check, answer, *words):
    ok, out = verdict(capsys, check, answer)
    assert ok and out.startswith("Correct: "), out
    for word in words:
        assert word in out, out


def rejected(capsys, check, answer, *words, start="Not yet: ", absent=()):
    ok, out = verdict(capsys, check, answer)
    assert ok is False and out.startswith(start) and out.count("\n") == 1, out
    for word in words:
        assert word in out, out
    for word in absent:
        assert word not in out, out


NTK = {"rope_type": "ntk"}


def settings(config):
    """head_dim, base and the rope_scaling entries of a config, as a learner reads them."""
    return config["head_dim"], config["rope_theta"], config["rope_scaling"]


# Written independently of helpers/rope_scaling.py, as a learner would.

# --------------------------------------------------------------------------------------------
# 1. NTK-aware frequencies
# --------------------------------------------------------------------------------------------

def ntk_loop(dim, base, factor):
    new_base = base * factor ** (dim / (dim - 2))
    return [new_base ** (-2 * i / dim) for i in range(dim // 2)]


def ntk_rope_frequencies(dim, base, factor):
    """float32, through the course's rope_frequencies, which the exercise allows."""
    return rope_frequencies(dim, base * factor ** (dim / (dim - 2)))


def ntk_float64(dim, base, factor):
    new_base = base * factor ** (dim / (dim - 2))
    return 1.0 / new_base ** (torch.arange(0, dim, 2, dtype=torch.float64) / dim)


def ntk_numpy32(dim, base, factor):
    new_base = np.float32(base * factor ** (dim / (dim - 2)))
    return new_base ** (-np.arange(0, dim, 2, dtype=np.float32) / np.float32(dim))


@pytest.mark.parametrize("answer", [
    ntk_loop, ntk_rope_frequencies, ntk_float64, ntk_numpy32,
    lambda d, b, s: tuple(ntk_loop(d, b, s)),
    lambda d, b, s: ntk_float64(d, b, s).float().requires_grad_(),
    lambda d, b, s: ntk_float64(d, b, s).numpy().astype(np.longdouble),  # torch cannot take it
    lambda d, b, s: list(ntk_float64(d, b, s).numpy().astype(np.longdouble)),
])
def test_ntk_right_answers_in_any_form(capsys, answer):
    accepted(capsys, checks.check_ntk_inv_freq, answer, "6 settings", "exactly s times slower")


def ntk_with(power=None, ladder=2, divide=1.0):
    """NTK-aware frequencies with the base grown by s**power (d/(d-2) when None)."""
    def answer(dim, base, factor):
        new_base = base * factor ** (dim / (dim - 2) if power is None else power(dim))
        return torch.tensor([new_base ** (-ladder * i / dim) / divide for i in range(dim // 2)])
    return answer


@pytest.mark.parametrize("answer,words", [
    (lambda d, b, s: rope_frequencies(d, b) / s, ["position interpolation (PI)"]),
    (ntk_with(power=lambda d: 1), ["multiplied the base by s", "s^(d/(d-2))"]),
    (ntk_with(power=lambda d: (d - 2) / d), ["upside down"]),
    (ntk_with(ladder=1), ["your exponent is -i/d; it is -2i/d", "b'^(-2i/d)"]),
    (lambda d, b, s: rope_frequencies(d, b), ["factor was not used"]),
    (lambda d, b, s: b * s ** (d / (d - 2)), ["the new base b'", "frequencies b'^(-2i/d)"]),
    (lambda d, b, s: torch.tensor(b * s ** (d / (d - 2))), ["the new base b'"]),
    (lambda d, b, s: 3.0, ["returned one number"]),
    (ntk_with(divide=1.001), ["expected", "b' = b·s^(d/(d-2))"]),
    (lambda d, b, s: torch.cat([ntk_float64(d, b, s)] * 2),
     ["expected shape", "one frequency per pair"]),
    (lambda d, b, s: ntk_float64(d, b, s)[None], ["expected shape"]),
    (lambda d, b, s: ntk_float64(d, b, s).half(), ["float16/bfloat16 is too coarse here: "
                                                   "compute in float32 or float64"]),
    (lambda d, b, s: ntk_float64(d, b, s).numpy().astype(np.float16), ["too coarse"]),
    (lambda d, b, s: list(ntk_float64(d, b, s).bfloat16()), ["too coarse"]),
])
def test_ntk_typical_mistakes(capsys, answer, words):
    rejected(capsys, checks.check_ntk_inv_freq, answer, *words)


# --------------------------------------------------------------------------------------------
# 2. Llama 3.1's frequencies
# --------------------------------------------------------------------------------------------

# The numbers Meta's reference apply_scaling writes in (the factor 8 only in its first release).
META = {"factor": 8.0, "low": 1.0, "high": 4.0, "original": 8192}


def llama3_loop(config, mistake=None, written_in=()):
    """Pair by pair in Python floats, as Meta's reference code does; `mistake` builds one in,
    and Meta's numbers for the settings named in `written_in` replace the config's."""
    dim, base, scaling = settings(config)
    given = {"factor": scaling["factor"], "low": scaling["low_freq_factor"],
             "high": scaling["high_freq_factor"],
             "original": scaling["original_max_position_embeddings"]}
    given.update({setting: META[setting] for setting in written_in})
    factor, low, high, original = given["factor"], given["low"], given["high"], given["original"]
    if mistake == "multiplied":
        factor = 1 / factor
    out = []
    for i in range(dim // 2):
        theta = base ** (-2 * i / dim)
        wavelength = (1 if mistake == "no_2pi" else 2 * math.pi) / theta
        smooth = (original / wavelength - low) / (high - low)
        if mistake in ("blend_reversed", "mirrored"):
            smooth = 1 - smooth
        if mistake == "blend_squared":  # no check names this one: the fallback explains
            smooth = smooth ** 2
        if wavelength < original / high:
            out.append(theta / factor if mistake in ("swapped", "mirrored") else theta)
        elif wavelength > original / low:
            out.append(theta if mistake in ("swapped", "mirrored", "slow_kept") else
                       theta / factor)
        else:
            out.append((1 - smooth) * theta / factor + smooth * theta)
    return out


def llama3_torch(config):
    """Vectorised, float32."""
    dim, base, scaling = settings(config)
    theta = rope_frequencies(dim, base)
    wavelength = 2 * math.pi / theta
    original = scaling["original_max_position_embeddings"]
    low, high = scaling["low_freq_factor"], scaling["high_freq_factor"]
    smooth = ((original / wavelength - low) / (high - low)).clamp(0, 1)
    return (1 - smooth) * theta / scaling["factor"] + smooth * theta


def llama3_numpy_mutating(config):
    """float64 NumPy, and it empties the config it was given: the check must not mind."""
    scaling = config.pop("rope_scaling")
    dim, base = config.pop("head_dim"), config.pop("rope_theta")
    theta = base ** (-np.arange(0, dim, 2) / dim)
    wavelength = 2 * np.pi / theta
    factor, original = scaling.pop("factor"), scaling.pop("original_max_position_embeddings")
    low, high = scaling.pop("low_freq_factor"), scaling.pop("high_freq_factor")
    smooth = (original / wavelength - low) / (high - low)
    blended = (1 - smooth) * theta / factor + smooth * theta
    return np.where(wavelength < original / high, theta,
                    np.where(wavelength > original / low, theta / factor, blended))


@pytest.mark.parametrize("answer", [llama3_loop, llama3_torch, llama3_numpy_mutating,
                                    lambda config: tuple(llama3_loop(config)),
                                    lambda config: torch.tensor(llama3_loop(config))])
def test_llama3_right_answers_in_any_form(capsys, answer):
    accepted(capsys, checks.check_llama3_inv_freq, answer, "7 configs", "all three bands",
             "low_freq_factor 2 and high_freq_factor 8")


def llama3_mistake(name):
    return lambda config: llama3_loop(config, name)


def llama3_top_level(config):
    return torch.tensor(llama3_loop(config)) / config["factor"]


@pytest.mark.parametrize("answer,words", [
    (llama3_mistake("swapped"), ["bands are swapped"]),
    (llama3_mistake("mirrored"), ["bands are swapped"]),
    (llama3_mistake("no_2pi"), ["2π/θᵢ", "not 1/θᵢ"]),
    (llama3_mistake("blend_reversed"), ["blend weights are reversed"]),
    (llama3_mistake("slow_kept"), ["must be divided by the factor; yours are unchanged"]),
    (llama3_mistake("multiplied"), ["multiplied by the factor"]),
    (lambda config: rope_frequencies(config["head_dim"], config["rope_theta"])
     / config["rope_scaling"]["factor"], ["position interpolation"]),
    (lambda config: rope_frequencies(config["head_dim"], config["rope_theta"]),
     ["original frequencies"]),
    (llama3_top_level, ["KeyError: 'factor'", "sit in config[\"rope_scaling\"]"]),
    (lambda config: config["base"], ["KeyError: 'base'", "'rope_theta'"]),
    (lambda config: (llama3_torch(config), 1.0), ["returned a pair", "only the frequencies"]),
    (lambda config: torch.tensor(llama3_loop(config)) * 1.001, ["expected", "wavelength is"]),
    (llama3_mistake("blend_squared"), ["between L / high_freq_factor = ",
                                       ", L / low_freq_factor = ", "blended with w = "]),
    # Meta's reference apply_scaling writes in low 1 and 8192 (its first release also the
    # factor 8 and high 4): one, two, three or all four.
    *[(lambda config, written_in=written_in: llama3_loop(config, written_in=written_in), [
        f"you wrote in {named}, where the config gives its own",
        "Meta's reference apply_scaling fixes low_freq_factor = 1 and the original 8192 tokens "
        "in its code (its first release also the factor 8 and high_freq_factor 4)"])
      for written_in, named in [
          (("low",), "low_freq_factor = 1"), (("high",), "high_freq_factor = 4"),
          (("original",), "the original 8192 tokens"), (("factor",), "the factor 8"),
          (("low", "high"), "low_freq_factor = 1 and high_freq_factor = 4"),
          (("factor", "original"), "the factor 8 and the original 8192 tokens"),
          (("low", "high", "original"), "low_freq_factor = 1, high_freq_factor = 4 and the "
                                         "original 8192 tokens"),
          (("factor", "low", "high", "original"), "the factor 8, low_freq_factor = 1, "
                                                  "high_freq_factor = 4 and the original "
                                                  "8192 tokens")]],
    (lambda config: llama3_torch(config).half(), ["float16/bfloat16 is too coarse here",
                                                  "compute in float32 or float64"]),
    (lambda config: config.head_dim, ["AttributeError: 'dict' object has no attribute",
                                      "config is a dict: read config[\"head_dim\"] and "
                                      "config[\"rope_scaling\"][\"factor\"]"]),
    (lambda config: llama3_torch(config)[:-1], ["expected shape"]),
])
def test_llama3_typical_mistakes(capsys, answer, words):
    rejected(capsys, checks.check_llama3_inv_freq, answer, *words)


# --------------------------------------------------------------------------------------------
# 3. YaRN
# --------------------------------------------------------------------------------------------

def yarn_loop(config, mistake=None):
    """Python floats, pair by pair; `mistake` builds one typical mistake in."""
    dim, base, scaling = settings(config)
    factor, original = scaling["factor"], scaling["original_max_position_embeddings"]
    fast = scaling.get("beta_fast") or 32
    slow = scaling.get("beta_slow") or 1
    if mistake == "betas_ignored":
        fast, slow = 32, 1
    if mistake == "betas_swapped":
        fast, slow = slow, fast
    turn = 1 if mistake == "no_2pi" else 2 * math.pi
    start = dim * math.log(original / (fast * turn)) / (2 * math.log(base))
    end = dim * math.log(original / (slow * turn)) / (2 * math.log(base))
    rounding = {"no_truncate": (float, float), "round": (round, round), "int": (int, int),
                "inward": (math.ceil, math.floor)}.get(mistake, (math.floor, math.ceil))
    start, end = rounding[0](start), rounding[1](end)
    if mistake != "no_clamp":
        start = max(start, 0)
    end = min(end, dim // 2 - 1 if mistake == "pair_clamp" else dim - 1)
    if start == end and mistake != "ends_meet":
        end += 0.001
    inv_freq = []
    for i in range(dim // 2):
        theta = base ** (-2 * i / dim)
        if start == end:  # no 0.001: what torch gives, 0 / 0 where the ends meet, ±1 / 0 beside
            ramp = math.nan if i == start else float(i > start)
        else:
            ramp = min(max((i - start) / (end - start), 0.0), 1.0)
        if mistake == "ramp_reversed":
            ramp = 1 - ramp
        inv_freq.append(theta / factor * ramp + theta * (1 - ramp))
    given = scaling.get("attention_factor")
    attention = 0.1 * math.log(factor) + 1 if given is None or mistake == "attention_ignored" \
        else given
    if mistake == "multiplied_given":  # as YaRN's own code does with its attn_factor
        attention = (0.1 * math.log(factor) + 1) * (1.0 if given is None else given)
    attention = {"attention_missing": 1.0, "log10": 0.1 * math.log10(factor) + 1,
                 "squared": attention ** 2, "square_root": math.sqrt(attention)}.get(mistake,
                                                                                   attention)
    return inv_freq, attention


def yarn_torch(config):
    """Vectorised in float32, the factor as a one-element tensor, as a tuple."""
    dim, base, scaling = settings(config)
    factor = torch.tensor([float(scaling["factor"])])
    original = scaling["original_max_position_embeddings"]
    beta_fast = scaling.get("beta_fast") or 32
    beta_slow = scaling.get("beta_slow") or 1
    theta = rope_frequencies(dim, base)
    ends = dim * torch.log(original / (torch.tensor([beta_fast, beta_slow]) * 2 * math.pi)) / (
        2 * math.log(base))
    low = max(math.floor(ends[0].item()), 0)
    high = min(math.ceil(ends[1].item()), dim - 1)
    keep = 1 - ((torch.arange(dim // 2) - low) / max(high - low, 0.001)).clamp(0, 1)
    attention = scaling.get("attention_factor")
    attention = 0.1 * torch.log(factor) + 1 if attention is None else attention
    return theta * keep + theta / factor * (1 - keep), attention


def yarn_numpy(config):
    """NumPy arrays, the factor a NumPy scalar, returned as a list."""
    inv_freq, attention = yarn_loop(config)
    return [np.asarray(inv_freq, dtype=np.float32), np.float32(attention)]


def yarn_numpy_0d(config):
    """The factor as a 0-d NumPy array, what np.asarray(0.1 * np.log(s) + 1) gives."""
    inv_freq, attention = yarn_loop(config)
    return np.array(inv_freq), np.asarray(attention)


def yarn_tuple_list(config):
    """A tuple of floats, and the factor as a one-element list."""
    inv_freq, attention = yarn_loop(config)
    return tuple(inv_freq), [attention]


@pytest.mark.parametrize("answer", [yarn_loop, yarn_torch, yarn_numpy, yarn_numpy_0d,
                                    yarn_tuple_list])
def test_yarn_right_answers_in_any_form(capsys, answer):
    accepted(capsys, checks.check_yarn_inv_freq, answer, "9 configs", "ramp ends that meet",
             "0.1·ln(s) + 1")


def yarn_mistake(name):
    return lambda config: yarn_loop(config, name)


def yarn_get_none(config):
    """.get with a default still returns None when the config says null."""
    dim, base, scaling = settings(config)
    local = dict(scaling, beta_fast=scaling.get("beta_fast", 32),
                 beta_slow=scaling.get("beta_slow", 1))
    local["beta_fast"] * 2.0
    return yarn_loop(config)


def yarn_get_with_default(config):
    """.get("attention_factor", default) gives None when the config says null."""
    inv_freq, _ = yarn_loop(config)
    scaling = config["rope_scaling"]
    return inv_freq, scaling.get("attention_factor", 0.1 * math.log(scaling["factor"]) + 1)


def yarn_torch_without_the_meeting_rule(config):
    """Right but for the 0.001: where the ends meet, torch divides 0 by 0 (NaN)."""
    dim, base, scaling = settings(config)
    low, high = yarn_ends(config)
    ramp = ((torch.arange(dim // 2) - low) / (high - low)).clamp(0, 1)
    theta = rope_frequencies(dim, base)
    return (1 - ramp) * theta + ramp * theta / scaling["factor"], yarn_loop(config)[1]


def yarn_loop_without_the_meeting_rule(config):
    """The same in Python floats: 0 / 0 raises ZeroDivisionError."""
    dim, base, scaling = settings(config)
    low, high = yarn_ends(config)
    ramps = [min(max((i - low) / (high - low), 0.0), 1.0) for i in range(dim // 2)]
    return [base ** (-2 * i / dim) * (1 - r + r / scaling["factor"])
            for i, r in enumerate(ramps)], yarn_loop(config)[1]


def yarn_ends(config):
    """YaRN's ramp ends, rounded outwards and clamped, without the 0.001."""
    dim, base, scaling = settings(config)
    original = scaling["original_max_position_embeddings"]
    turning = [dim * math.log(original / (2 * math.pi * (scaling.get(beta) or default)))
               / (2 * math.log(base)) for beta, default in (("beta_fast", 32), ("beta_slow", 1))]
    return max(math.floor(turning[0]), 0), min(math.ceil(turning[1]), dim - 1)


def yarn_required_beta(config):
    config["rope_scaling"]["beta_fast"] + 0
    return yarn_loop(config)


class Unreadable:
    """Looks like a sequence, but asking its length or an item fails."""

    def __len__(self):
        raise ZeroDivisionError("no length")

    def __getitem__(self, index):
        raise ZeroDivisionError("no items")


@pytest.mark.parametrize("answer,words", [
    (yarn_mistake("ramp_reversed"), ["ramp is reversed"]),
    (yarn_mistake("no_truncate"), ["floor for the start", "ceil for the end"]),
    (yarn_mistake("no_clamp"), ["clamped at 0", "negative index"]),
    (yarn_mistake("pair_clamp"), ["you clamped the end of the ramp to dim/2 - 1",
                                  "YaRN's code and Hugging Face clamp to dim - 1",
                                  "dim is the head size, not the number of pairs"]),
    (yarn_torch_without_the_meeting_rule, ["ramp ends that meet", "pair 0 is nan",
                                           "when the two ends meet, add 0.001 to the end as "
                                           "Hugging Face does, or the ramp divides 0 by 0"]),
    (yarn_loop_without_the_meeting_rule, ["ramp ends that meet", "raised ZeroDivisionError",
                                          "Both ends of the ramp are pair 0 here",
                                          "when the two ends meet, add 0.001"]),
    (yarn_mistake("square_root"), ["frequencies are right", "square root of the attention "
                                   "factor", "its square multiplies the logits"]),
    (lambda config: (yarn_loop(config)[0], torch.tensor(yarn_loop(config)[1]).half()),
     ["frequencies are right", "float16/bfloat16 is too coarse here"]),
    (lambda config: (torch.tensor(yarn_loop(config)[0]).bfloat16(), yarn_loop(config)[1]),
     ["expected", "float16/bfloat16 is too coarse here: compute in float32 or float64"]),
    (yarn_mistake("betas_swapped"), ["beta_fast and beta_slow are swapped"]),
    (yarn_mistake("betas_ignored"), ["beta_fast and beta_slow were ignored"]),
    (yarn_mistake("no_2pi"), ["count turns, not radians"]),
    (lambda config: (rope_frequencies(config["head_dim"], config["rope_theta"]), 1.2),
     ["original frequencies"]),
    (yarn_mistake("attention_missing"), ["frequencies are right", "not 1"]),
    (yarn_mistake("log10"), ["natural logarithm"]),
    (yarn_mistake("squared"), ["square of the attention factor", "logits"]),
    (yarn_mistake("attention_ignored"), ["attention_factor given in the config"]),
    (yarn_mistake("multiplied_given"), ["multiplied the default by the given attention_factor",
                                        "Hugging Face, followed here, uses the given value"]),
    (yarn_mistake("round"), ["rounded to nearest (round)", "floor for the start"]),
    (yarn_mistake("int"), ["truncated with int()", "floor for the start"]),
    (yarn_mistake("inward"), ["floor and ceil are swapped (rounding inwards)"]),
    (yarn_get_with_default, ["with null settings", "is None", "takes its default",
                             ".get(key, default) still gives None"]),
    (lambda config: (yarn_loop(config)[0], yarn_loop(config)[1] * 1.01),
     ["gives the attention factor", "unless the config gives attention_factor"]),
    (lambda config: (torch.tensor(yarn_loop(config)[0]) * 1.001, yarn_loop(config)[1]),
     ["expected", "times in the original context", "the ramp runs from pair 23 to 40",
      "its ramp is"]),
    (lambda config: torch.tensor(yarn_loop(config)[0]), ["only the frequencies"]),
    (lambda config: yarn_loop(config)[::-1], ["other order"]),
    (lambda config: (yarn_loop(config)[0], 10 ** 400),
     ["attention factor, second in the pair", "too large for a float"]),
    (lambda config: (yarn_loop(config)[0], torch.ones(1, device="meta")),
     ["attention factor, second in the pair, should be a number", "got Tensor"]),
    (lambda config: (yarn_loop(config)[0], Unreadable()),
     ["attention factor, second in the pair, should be a number", "got Unreadable"]),
    (lambda config: (yarn_loop(config)[0], "1.2"), ["should be a number", "got str"]),
    (lambda config: (yarn_loop(config)[0][:3], 1.2), ["expected shape [64], got [3]"]),
    (lambda config: (yarn_loop(config), 1.2), ["the frequencies, first in the pair", "got tuple"]),
    (lambda config: {"inv_freq": 1}, ["returned dict", "(inv_freq, attention_factor)"]),
    (yarn_get_none, ["TypeError", "None", "takes its default"]),
    (yarn_required_beta, ["KeyError: 'beta_fast'", "optional", ".get()"]),
    (lambda config: config["factor"], ["KeyError: 'factor'", "config[\"rope_scaling\"]"]),
])
def test_yarn_typical_mistakes(capsys, answer, words):
    rejected(capsys, checks.check_yarn_inv_freq, answer, *words)


def test_a_number_then_none_is_not_the_pair_in_the_other_order(capsys):
    rejected(capsys, checks.check_yarn_inv_freq, lambda config: [0.1, None],
             "the frequencies, first in the pair", "expected shape [64], got []",
             absent=["other order"])


# --------------------------------------------------------------------------------------------
# The mistakes the checks name really differ, on the fixed configs alone
# --------------------------------------------------------------------------------------------

def differ(a, b):
    return not torch.allclose(torch.as_tensor(a, dtype=torch.float64),
                              torch.as_tensor(b, dtype=torch.float64), rtol=1e-4, atol=0,
                              equal_nan=True)


def test_each_ntk_mistake_differs_from_the_right_answer_and_from_the_others():
    cases = [setting for _, setting in checks.NTK_SETTINGS]
    names = list(checks._NTK_MISTAKES)
    for name in names:
        assert any(differ(checks._ntk_variant(case, name), ntk_loop(*case)) for case in cases)
        for other in names[names.index(name) + 1:]:
            assert any(differ(checks._ntk_variant(case, name), checks._ntk_variant(case, other))
                       for case in cases), (name, other)
    for case in cases:  # the variant with no mistake is the right answer
        assert not differ(checks._ntk_variant(case), ntk_loop(*case))


def test_each_llama3_mistake_differs_from_the_right_answer_and_from_the_others():
    configs = [config for _, config in checks.LLAMA3_CONFIGS]
    names = list(checks._LLAMA3_MISTAKES)
    for name in names:
        assert any(differ(checks._llama3_variant(c, name), llama3_loop(c)) for c in configs), name
        for other in names[names.index(name) + 1:]:
            assert any(differ(checks._llama3_variant(c, name), checks._llama3_variant(c, other))
                       for c in configs), (name, other)
        if name not in ("pi", "unscaled"):  # the loop above builds the same mistake
            assert all(not differ(checks._llama3_variant(c, name), llama3_loop(c, name))
                       for c in configs), name
    for config in configs:
        assert not differ(checks._llama3_variant(config), llama3_loop(config))


SETTING_NAMES = {"factor": "factor", "low_freq_factor": "low", "high_freq_factor": "high",
                 "original_max_position_embeddings": "original"}


def test_every_set_of_metas_numbers_written_in_differs_and_is_built_as_data():
    """15 sets (one to four of Meta's numbers), each a copy of the config holding them: it
    gives what an answer with them written in gives, and differs from the right answer and
    from every smaller set it contains on the fixed configs alone."""
    configs = [config for _, config in checks.LLAMA3_CONFIGS]
    before = copy.deepcopy(configs)
    sets = list(checks._WRITTEN_IN_MISTAKES)
    assert len(sets) == 15 and all(len(a) <= len(b) for a, b in zip(sets, sets[1:]))
    for keys in sets:
        written_in = [SETTING_NAMES[key] for key in keys]
        assert all(not differ(checks._llama3_written_in(c, keys),
                              llama3_loop(c, written_in=written_in)) for c in configs), keys
        assert any(differ(checks._llama3_written_in(c, keys), llama3_loop(c))
                   for c in configs), keys
        for smaller in sets[:sets.index(keys)]:
            if set(smaller) < set(keys):
                assert any(differ(checks._llama3_written_in(c, keys),
                                  checks._llama3_written_in(c, smaller)) for c in configs)
    assert configs == before  # the copies hold Meta's numbers, the fixed configs do not


def test_each_yarn_mistake_differs_from_the_right_answer_and_from_the_others():
    configs = [config for _, config in checks.YARN_CONFIGS]
    frequency_mistakes = list(checks._YARN_MISTAKES)
    for name in frequency_mistakes:
        assert any(differ(checks._yarn_variant(c, name), yarn_loop(c)[0]) for c in configs)
        for other in frequency_mistakes[frequency_mistakes.index(name) + 1:]:
            assert any(differ(checks._yarn_variant(c, name), checks._yarn_variant(c, other))
                       for c in configs), (name, other)
        if name != "unscaled":
            assert all(not differ(checks._yarn_variant(c, name), yarn_loop(c, name)[0])
                       for c in configs), name
    attention_mistakes = list(checks._ATTENTION_MISTAKES)
    for name in attention_mistakes:
        assert any(not math.isclose(checks._yarn_attention(c, name), yarn_loop(c)[1],
                                    rel_tol=1e-4) for c in configs), name
        for other in attention_mistakes[attention_mistakes.index(name) + 1:]:
            assert any(not math.isclose(checks._yarn_attention(c, name),
                                        checks._yarn_attention(c, other), rel_tol=1e-4)
                       for c in configs), (name, other)
        assert all(math.isclose(checks._yarn_attention(c, name), yarn_loop(c, name)[1])
                   for c in configs), name
    for config in configs:
        inv_freq, attention = checks._yarn_variant(config), checks._yarn_attention(config)
        assert not differ(inv_freq, yarn_loop(config)[0])
        assert math.isclose(attention, yarn_loop(config)[1])


def test_the_fixed_configs_exercise_what_they_claim():
    tiny = dict(checks.YARN_CONFIGS)["a 16-dimensional head's config"]
    assert checks._yarn_ramp_ends(tiny)[0] < 0  # the clamp at 0 matters
    long = dict(checks.YARN_CONFIGS)["a long original context"]
    assert checks._yarn_ramp_ends(long)[1] > long["head_dim"] // 2  # past the last pair
    # The Qwen-style ends, 23.6 and 39.7: floor/ceil, round, int and ceil/floor all differ.
    qwen = dict(checks.YARN_CONFIGS)["the Qwen-style config"]
    ends = checks._yarn_ramp_ends(qwen)
    roundings = [(math.floor, math.ceil), (round, round), (int, int), (math.ceil, math.floor)]
    assert len({(start(ends[0]), end(ends[1])) for start, end in roundings}) == 4
    # Where the ends meet, both clamp to pair 0: only the 0.001 keeps 0 / 0 out of the ramp.
    meet = dict(checks.YARN_CONFIGS)["ramp ends that meet"]
    assert all(end < 0 for end in checks._yarn_ramp_ends(meet))
    assert checks._yarn_range(meet) == (0, 0)
    assert checks._yarn_ramp(meet, "ends_meet")[0].isnan()
    assert not any(checks._yarn_range(c)[0] == checks._yarn_range(c)[1]
                   for name, c in checks.YARN_CONFIGS if name != "ramp ends that meet")
    given = dict(checks.YARN_CONFIGS)["an attention_factor given"]["rope_scaling"]
    assert given["attention_factor"] != 1  # multiplying it with the default shows
    for _, config in checks.LLAMA3_CONFIGS:
        _, fast, slow = checks._llama3_bands(config)
        assert fast.any() and slow.any() and not (fast | slow).all()
    # The fixed configs agree with the course on the split of pairs the notebook states.
    llama31 = dict(checks.LLAMA3_CONFIGS)["the config of Llama 3.1"]
    _, fast, slow = checks._llama3_bands(llama31)
    assert (int(fast.sum()), int(slow.sum())) == (29, 29)
    # Every run has a config with none of Meta's written-in numbers, all three bands present.
    other = dict(checks.LLAMA3_CONFIGS)["a config with low_freq_factor 2 and high_freq_factor 8"]
    scaling = other["rope_scaling"]
    assert (scaling["low_freq_factor"], scaling["high_freq_factor"],
            scaling["original_max_position_embeddings"]) == (2.0, 8.0, 4096)
    _, fast, slow = checks._llama3_bands(other)
    assert (int(fast.sum()), int(slow.sum()), int((~fast & ~slow).sum())) == (16, 11, 5)


def llama3_numpy32_loop(config):
    """float32 NumPy, pair by pair: the least precise of the right answers tried."""
    dim, base, scaling = settings(config)
    theta = np.float32(1) / np.float32(base) ** (np.arange(0, dim, 2, dtype=np.float32)
                                                 / np.float32(dim))
    original, factor = scaling["original_max_position_embeddings"], scaling["factor"]
    low, high = scaling["low_freq_factor"], scaling["high_freq_factor"]
    out = []
    for pair_theta in theta:
        wavelength = np.float32(2 * np.pi) / pair_theta
        if wavelength < original / high:
            out.append(pair_theta)
        elif wavelength > original / low:
            out.append(pair_theta / np.float32(factor))
        else:
            smooth = (original / wavelength - low) / (high - low)
            out.append((1 - smooth) * pair_theta / np.float32(factor) + smooth * pair_theta)
    return np.array(out, dtype=np.float32)


def as_float64(answer):
    return torch.as_tensor(np.asarray(answer, dtype=np.float64))


@pytest.mark.parametrize("seed", range(300))
def test_random_configs_cover_every_band_and_let_float32_and_float64_answers_pass(seed):
    """The random part of each check: every band is present, and right answers in float32 (the
    course's own, and the independent ones above) and in float64 are all within the tolerance
    of the exact values, for any draw (here 300 of them). So is the exact answer moved by
    2e-6·θᵢ either way, more than float32 rounding (1.3e-6·θᵢ at worst in the answers tried):
    judged relative to the scaled θ'ᵢ, up to 64 times smaller, it would not be."""
    def passes(answers, check_cases, exact):
        values = [exact(case) for _, case in check_cases]
        thetas = [checks._theta(*case[:2]) if isinstance(case, tuple) else
                  checks._theta(case["head_dim"], case["rope_theta"]) for _, case in check_cases]
        nudged = [[value + sign * 2e-6 * theta for value, theta in zip(values, thetas)]
                  for sign in (1, -1)]
        return all(checks._first_difference([as_float64(a) for a in given], values, thetas)
                   is None for given in [answers] + nudged)

    rng = random.Random(seed)
    ntk = checks._ntk_cases(rng)
    for answer in (ntk_numpy32, ntk_rope_frequencies, ntk_loop,
                   lambda d, b, s: course_inv_freq(d, b, dict(NTK, factor=s))[0]):
        assert passes([answer(*case) for _, case in ntk], ntk, checks._ntk_variant)
    llama3 = checks._llama3_cases(rng)
    for _, config in llama3[len(checks.LLAMA3_CONFIGS):]:
        _, fast, slow = checks._llama3_bands(config)
        assert fast.any() and slow.any() and not (fast | slow).all()
    for answer in (llama3_torch, llama3_numpy32_loop, llama3_loop,
                   lambda config: course_inv_freq(*settings(config))[0]):
        assert passes([answer(config) for _, config in llama3], llama3, checks._llama3_variant)
    yarn = checks._yarn_cases(rng)
    assert all(checks._yarn_regimes_ok(config) for _, config in yarn[len(checks.YARN_CONFIGS):])
    for answer in (yarn_torch, yarn_loop, lambda config: course_inv_freq(*settings(config))):
        assert passes([answer(config)[0] for _, config in yarn], yarn,
                      checks._yarn_variant)


def test_the_tolerance_still_fails_what_is_not_right():
    """Half precision (errors near 5e-4) fails; so does 2·RTOL·θᵢ off, on one pair only."""
    case = (128, 500000.0, 8.0)
    exact, theta = checks._ntk_variant(case), checks._theta(128, 500000.0)
    assert checks._first_difference([torch.tensor(ntk_loop(*case)).half().double()],
                                    [exact], [theta]) == (0, 1)
    off = exact.clone()
    off[40] += 2 * checks.RTOL * theta[40]
    assert checks._first_difference([off], [exact], [theta]) == (0, 40)


# --------------------------------------------------------------------------------------------
# The course's own functions are refused, and restored afterwards
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("check,bound,through_module", [
    (checks.check_ntk_inv_freq,
     lambda d, b, s: course_inv_freq(d, b, dict(NTK, factor=s))[0],
     lambda d, b, s: helpers.rope_scaling.rope_inv_freq(d, b, dict(NTK, factor=s))[0]),
    (checks.check_llama3_inv_freq,
     lambda config: course_inv_freq(*settings(config))[0],
     lambda config: helpers.rope_inv_freq(*settings(config))[0]),
    (checks.check_yarn_inv_freq,
     lambda config: course_inv_freq(*settings(config)),
     lambda config: helpers.rope_scaling.rope_inv_freq(*settings(config))),
])
def test_the_course_function_is_refused_then_restored(capsys, check, bound, through_module):
    rejected(capsys, check, bound, "`course_inv_freq`", "rope_frequencies(dim, base) is allowed")
    rejected(capsys, check, through_module, "called the course's function")
    assert helpers.rope_scaling.rope_inv_freq is course_inv_freq
    assert helpers.rope_inv_freq is course_inv_freq
    assert helpers.rope_scaling.yarn_attention_factor(1.0) == 1.0


def test_the_private_parts_are_refused_too(capsys):
    rejected(capsys, checks.check_yarn_inv_freq,
             lambda config: (yarn_loop(config)[0],
                             helpers.rope_scaling.yarn_attention_factor(
                                 config["rope_scaling"]["factor"])),
             "called the course's function", "yarn_attention_factor")
    rejected(capsys, checks.check_llama3_inv_freq,
             lambda config: helpers.rope_scaling._llama3(
                 rope_frequencies(config["head_dim"], config["rope_theta"]),
                 config["rope_scaling"]["factor"], config["rope_scaling"]),
             "called the course's function", "_llama3")


def test_a_course_module_that_imported_rope_inv_freq_hides_it_too(capsys, monkeypatch):
    """TinyGPT.set_rope_scaling reaches rope_inv_freq through helpers.model's own name."""
    copy_holder = types.ModuleType("helpers._copy_for_test")
    copy_holder.rope_inv_freq = course_inv_freq
    monkeypatch.setitem(sys.modules, "helpers._copy_for_test", copy_holder)
    rejected(capsys, checks.check_llama3_inv_freq,
             lambda config: sys.modules["helpers._copy_for_test"].rope_inv_freq(
                 *settings(config))[0], "called the course's function")
    assert copy_holder.rope_inv_freq is course_inv_freq


# The check module's own reference functions, bound before the check as an import would bind them.
from helpers.exercises.context import _llama3_variant as bound_variant  # noqa: E402

REFERENCES = ["_theta", "_ntk_variant", "_llama3_variant", "_yarn_variant", "_yarn_ramp",
              "_yarn_attention", "_llama3_written_in", "_llama3", "_yarn", "rope_inv_freq",
              "yarn_attention_factor"]


def theta_from_the_check(dim, base):
    return helpers.exercises.context._theta(dim, base)


def yarn_with_the_checks_ramp(config):
    theta = rope_frequencies(config["head_dim"], config["rope_theta"]).double()
    ramp = helpers.exercises.context._yarn_ramp(config)
    factor = config["rope_scaling"]["factor"]
    return theta * (1 - ramp) + theta / factor * ramp, yarn_loop(config)[1]


@pytest.mark.parametrize("check,answer,words", [
    # Through the check module's attributes, looked up while the learner's code runs.
    (checks.check_ntk_inv_freq, lambda d, b, s: helpers.exercises.context._ntk_variant((d, b, s)),
     ["called the course's function", "helpers.exercises.context._ntk_variant"]),
    (checks.check_llama3_inv_freq, lambda config: helpers.exercises.context._llama3_variant(config),
     ["called the course's function", "helpers.exercises.context._llama3_variant"]),
    (checks.check_yarn_inv_freq, lambda config: helpers.exercises.context._yarn_variant(config),
     ["called the course's function", "helpers.exercises.context._yarn_variant"]),
    (checks.check_ntk_inv_freq, lambda d, b, s: theta_from_the_check(d, b * s ** (d / (d - 2))),
     ["called the course's function", "helpers.exercises.context._theta"]),
    (checks.check_yarn_inv_freq, yarn_with_the_checks_ramp,
     ["called the course's function", "helpers.exercises.context._yarn_ramp"]),
    (checks.check_yarn_inv_freq,
     lambda config: (yarn_loop(config)[0], helpers.exercises.context._yarn_attention(config)),
     ["called the course's function", "helpers.exercises.context._yarn_attention"]),
    (checks.check_llama3_inv_freq,
     lambda config: helpers.exercises.context._llama3_written_in(config, ()),
     ["called the course's function", "helpers.exercises.context._llama3_written_in"]),
    # The course's functions that the check module imported, reached through it.
    (checks.check_llama3_inv_freq,
     lambda config: helpers.exercises.context._llama3(
         rope_frequencies(config["head_dim"], config["rope_theta"]),
         config["rope_scaling"]["factor"], config["rope_scaling"])[0],
     ["called the course's function", "_llama3"]),
    (checks.check_yarn_inv_freq,
     lambda config: helpers.exercises.context._yarn(
         config["head_dim"], config["rope_theta"], config["rope_scaling"]["factor"],
         {k: v for k, v in config["rope_scaling"].items() if k != "rope_type"}),
     ["called the course's function", "_yarn"]),
    (checks.check_ntk_inv_freq,
     lambda d, b, s: helpers.exercises.context.rope_inv_freq(d, b, dict(NTK, factor=s))[0],
     ["called the course's function", "rope_inv_freq"]),
    # helpers.model's own name for it (TinyGPT.set_rope_scaling calls that one).
    (checks.check_llama3_inv_freq,
     lambda config: helpers.model.rope_inv_freq(*settings(config))[0],
     ["called the course's function", "helpers.model.rope_inv_freq"]),
    # A name bound before the check runs.
    (checks.check_llama3_inv_freq, lambda config: bound_variant(config),
     ["your function calls `bound_variant`"]),
])
def test_the_checks_own_reference_functions_are_refused_then_restored(capsys, check, answer,
                                                                       words):
    originals = {name: getattr(checks, name) for name in REFERENCES}
    rejected(capsys, check, answer, *words)
    assert all(getattr(checks, name) is original for name, original in originals.items())
    assert helpers.model.rope_inv_freq is course_inv_freq


def ntk_default_argument(dim, base, factor, g=course_inv_freq):
    """The course's function captured in a default argument: bound without any name lookup."""
    return g(dim, base, {"rope_type": "ntk", "factor": factor})[0]


def llama3_keyword_default(config, *, g=course_inv_freq):
    return g(*settings(config))[0]


@pytest.mark.parametrize("check,answer", [(checks.check_ntk_inv_freq, ntk_default_argument),
                                          (checks.check_llama3_inv_freq, llama3_keyword_default)])
def test_a_course_function_in_a_default_argument_is_refused(capsys, check, answer):
    """Needs answers.refers_to to read __defaults__ and __kwdefaults__."""
    rejected(capsys, check, answer, f"{answer.__name__} calls `g`", "the course's own answer")


# rope_inv_freq kept where no name lookup reaches it: only the functions it calls can refuse it.
STASHED = [course_inv_freq]


class Tools:
    inv_freq = staticmethod(course_inv_freq)


PARTIAL = functools.partial(course_inv_freq)


@pytest.mark.parametrize("check,answer", [
    (checks.check_ntk_inv_freq, lambda d, b, s: STASHED[0](d, b, dict(NTK, factor=s))[0]),
    (checks.check_ntk_inv_freq, lambda d, b, s: Tools.inv_freq(d, b, dict(NTK, factor=s))[0]),
    (checks.check_ntk_inv_freq, lambda d, b, s: PARTIAL(d, b, dict(NTK, factor=s))[0]),
    (checks.check_llama3_inv_freq, lambda config: STASHED[0](*settings(config))[0]),
    (checks.check_yarn_inv_freq, lambda config: Tools.inv_freq(*settings(config))),
])
def test_a_stashed_rope_inv_freq_is_refused_by_name_then_restored(capsys, check, answer):
    """Every call of rope_inv_freq reads its dict with helpers.rope_scaling._read_scaling."""
    rejected(capsys, check, answer, "called the course's function",
             "without rope_inv_freq.", absent=["_read_scaling"])
    assert helpers.rope_scaling._read_scaling(None) == ("default", {})


def hf_config(config):
    """A Hugging Face config object (transformers 5) with the check's settings."""
    from transformers import PretrainedConfig
    scaling = config["rope_scaling"]
    hf = PretrainedConfig()
    hf.head_dim, hf.hidden_size, hf.num_attention_heads = config["head_dim"], config["head_dim"], 1
    hf.max_position_embeddings = 4 * scaling["original_max_position_embeddings"]
    hf.rope_parameters = {"rope_theta": config["rope_theta"], **scaling}
    return hf


def test_hugging_faces_functions_are_refused_while_transformers_is_loaded(capsys):
    """The check never imports transformers; a learner who did cannot use its answers either:
    not through ROPE_INIT_FUNCTIONS, the module's functions, nor a name bound before."""
    hf = pytest.importorskip("transformers.modeling_rope_utils")
    table = dict(hf.ROPE_INIT_FUNCTIONS)
    hf_yarn = hf._compute_yarn_parameters
    assert torch.allclose(hf_yarn(hf_config(dict(checks.YARN_CONFIGS)["the Qwen-style config"]),
                                  "cpu")[0].double(),
                          checks._yarn_variant(dict(checks.YARN_CONFIGS)["the Qwen-style config"]),
                          rtol=1e-5)  # the route would pass if it were not refused
    for check, answer, words in [
            (checks.check_llama3_inv_freq,
             lambda config: hf.ROPE_INIT_FUNCTIONS["llama3"](hf_config(config), "cpu")[0],
             "Hugging Face's ROPE_INIT_FUNCTIONS['llama3']"),
            (checks.check_yarn_inv_freq,
             lambda config: hf.ROPE_INIT_FUNCTIONS["yarn"](hf_config(config), "cpu"),
             "Hugging Face's ROPE_INIT_FUNCTIONS['yarn']"),
            (checks.check_yarn_inv_freq,
             lambda config: sys.modules["transformers.modeling_rope_utils"]
             ._compute_yarn_parameters(hf_config(config), "cpu"),
             "Hugging Face's _compute_yarn_parameters"),
            (checks.check_ntk_inv_freq,
             lambda d, b, s: sys.modules["transformers.modeling_rope_utils"]
             ._compute_dynamic_ntk_parameters(None, "cpu")[0],
             "Hugging Face's _compute_dynamic_ntk_parameters")]:
        rejected(capsys, check, answer, "called the course's function", words)
    rejected(capsys, checks.check_yarn_inv_freq,
             lambda config: hf_yarn(hf_config(config), "cpu"),
             "calls `hf_yarn`, Hugging Face's own answer")
    assert hf.ROPE_INIT_FUNCTIONS == table and hf._compute_yarn_parameters is hf_yarn


@pytest.mark.parametrize("check,arity", [(checks.check_ntk_inv_freq, 3),
                                         (checks.check_llama3_inv_freq, 1),
                                         (checks.check_yarn_inv_freq, 1)])
def test_sys_exit_is_reported_and_everything_restored(capsys, check, arity):
    def leave(*args):
        sys.exit(3)
    rejected(capsys, check, leave, "leave(", "called sys.exit()")
    assert helpers.rope_scaling.rope_inv_freq is course_inv_freq
    assert helpers.rope_scaling._read_scaling.__name__ == "_read_scaling"


class LazyFrequencies:
    """Reads like a sequence, and computes its values with the course's function only when the
    check reads them: after the learner's function has returned."""

    def __init__(self, config):
        self.config = config

    def __len__(self):
        return self.config["head_dim"] // 2

    def __getitem__(self, pair):
        if not 0 <= pair < len(self):
            raise IndexError(pair)
        return float(helpers.rope_scaling.rope_inv_freq(*settings(self.config))[0][pair])


def test_a_result_that_computes_when_read_is_read_while_the_course_is_hidden(capsys):
    rejected(capsys, checks.check_llama3_inv_freq, LazyFrequencies,
             "called the course's function", "helpers.rope_scaling.rope_inv_freq")
    rejected(capsys, checks.check_yarn_inv_freq,
             lambda config: (LazyFrequencies(config), yarn_loop(config)[1]),
             "called the course's function")


def test_a_sequence_like_answer_that_is_right_passes(capsys):
    class Frequencies(list):
        """A list subclass: read while the check runs the learner's code."""
    accepted(capsys, checks.check_llama3_inv_freq, lambda config: Frequencies(llama3_loop(config)),
             "7 configs")


# --------------------------------------------------------------------------------------------
# Bad answers get a sentence, never an exception
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("check,arity", [(checks.check_ntk_inv_freq, 3),
                                         (checks.check_llama3_inv_freq, 1),
                                         (checks.check_yarn_inv_freq, 1)])
@pytest.mark.parametrize("make,start,words", [
    (None, "Not done yet: ", ["replace None"]),
    ("stub", "Not done yet: ", ["returns None"]),
    ("crash", "Not yet: ", ["ZeroDivisionError"]),
    ("string", "Not yet: ", ["str"]),
    ("dict", "Not yet: ", ["dict"]),
    ("result", "Not yet: ", ["not its result", "Tensor"]),
    ("dict_itself", "Not yet: ", ["not its result", "dict"]),
    ("wrong_arity", "Not yet: ", ["TypeError"]),
    ("huge", "Not yet: ", [" int"]),
    ("unreadable", "Not yet: ", ["Unreadable"]),
])
def test_bad_answers_get_a_sentence(capsys, check, arity, make, start, words):
    def function(body):
        if arity == 3:
            return lambda dim, base, factor: body()
        return lambda config: body()
    answer = {
        None: None,
        "stub": function(lambda: None),
        "crash": function(lambda: 1 / 0),
        "string": function(lambda: "frequencies"),
        "dict": function(lambda: {"inv_freq": [1.0]}),
        "result": torch.ones(8),
        "dict_itself": {"head_dim": 16},
        "wrong_arity": (lambda: None) if arity == 1 else (lambda config: None),
        "huge": function(lambda: 10 ** 400),  # float() overflows
        "unreadable": function(Unreadable),  # len() raises
    }[make]
    rejected(capsys, check, answer, *words, start=start)


@pytest.mark.parametrize("check,answer", [
    (checks.check_ntk_inv_freq, lambda d, b, s: torch.ones(d // 2, device="meta")),
    (checks.check_llama3_inv_freq, lambda config: torch.ones(config["head_dim"] // 2,
                                                             device="meta")),
    (checks.check_yarn_inv_freq, lambda config: (torch.ones(config["head_dim"] // 2,
                                                            device="meta"), 1.2)),
])
def test_a_meta_tensor_gets_its_own_sentence(capsys, check, answer):
    rejected(capsys, check, answer, "a tensor on the meta device holds no values")


@pytest.mark.parametrize("check,arguments", [(checks.check_ntk_inv_freq, "(128, 500000.0, 8.0)"),
                                             (checks.check_llama3_inv_freq, "(config) with"),
                                             (checks.check_yarn_inv_freq, "(config) with")])
def test_messages_name_the_learners_function(capsys, check, arguments):
    def my_frequencies(*args):
        return None
    rejected(capsys, check, my_frequencies, "my_frequencies" + arguments, start="Not done yet: ")
    rejected(capsys, check, lambda *args: None, "your function" + arguments,
             start="Not done yet: ", absent=["<lambda>"])
    rejected(capsys, check, functools.partial(my_frequencies), "your function" + arguments,
             start="Not done yet: ")


@pytest.mark.parametrize("check,answer", [(checks.check_ntk_inv_freq, ntk_loop),
                                          (checks.check_llama3_inv_freq, llama3_loop),
                                          (checks.check_yarn_inv_freq, yarn_loop)])
def test_the_correct_line_is_the_same_on_every_run(capsys, check, answer):
    """The random configs change from run to run; the line a learner reads does not."""
    lines = {verdict(capsys, check, answer)[1] for _ in range(3)}
    assert len(lines) == 1 and lines.pop().startswith("Correct: ")
