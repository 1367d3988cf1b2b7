"""Checks for the exercises of notebook 08 (stretching RoPE past its trained length).

Each check runs the learner's function on fresh settings: published configs (Llama 3.1,
Llama 3.2 1B, a Qwen-style YaRN model), a 16-dimensional head, and random ones drawn so that
every band of pairs is present, and compares the answers with the three formulas below, written
out in float64. The course's own `rope_inv_freq` (and the functions behind it, wherever a
`helpers` module holds them), Hugging Face's functions for the same formulas (if transformers is
loaded), and this module's reference functions are out of reach while the learner's code runs;
`rope_frequencies(dim, base)` from notebook 05 stays allowed, since the exercises are about what
each method does to those frequencies.

The Llama 3 and YaRN exercises read a dict shaped like a Hugging Face model config:

    {"head_dim": 128, "rope_theta": 500000.0,
     "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                      "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}}

Each check prints its verdict and the reason (see `feedback`) and returns True or False. None of
them raises: a stub, a wrong type or shape, or a crash inside the learner's code each get one
sentence (`answers` reads the answers), and the typical mistakes are named: position
interpolation in place of NTK-aware scaling, an exponent upside down, the two bands swapped, a
wavelength without 2π, blend weights reversed, Meta's numbers (the factor 8, 1, 4 and 8192)
written in, the YaRN ramp reversed or its ends rounded the wrong way, not clamped or meeting
without the 0.001, the betas swapped or ignored, and the attention factor missing, in log10,
squared or square-rooted, or multiplied with the given one.
"""

from __future__ import annotations

import copy
import itertools
import math
import random
import sys

import torch

from .. import rope_scaling
from ..rope_scaling import _llama3, _yarn, rope_inv_freq, yarn_attention_factor
from .answers import (TOO_COARSE, as_number, as_plain_tensor, function_name, half_precision,
                      hidden_names, not_a_function, one_number, refers_to, report, run_settled,
                      sequence_length)
from .feedback import correct, not_yet, unanswered

__all__ = ["check_ntk_inv_freq", "check_llama3_inv_freq", "check_yarn_inv_freq"]

# Answers are compared with the exact (float64) values, pair by pair, within RTOL·θᵢ, where θᵢ is
# the pair's unscaled frequency: float32 arithmetic errs in proportion to θᵢ, not to the scaled
# θ'ᵢ (Llama 3's blend, (1 - w)·θᵢ/s + w·θᵢ, carries the rounding of w times θᵢ, up to 1e-5 of a
# small θ'ᵢ). Over 5,000 random configs, the float32 answers tried (torch, NumPy, pair by pair
# as Meta's apply_scaling) stay within 1.3e-6·θᵢ; every mistake named here differs by far more.
RTOL = 1e-5

# The course's functions that compute the answers.
_COURSE = (rope_inv_freq, _llama3, _yarn, yarn_attention_factor)

# This module's reference functions: they compute the answers too, so they are refused as well.
_REFERENCE: list = []


def _reference(function):
    """Mark a function as one of this module's reference functions (see `_REFERENCE`)."""
    _REFERENCE.append(function)
    return function


# A setting given as None: the sentence both the crash report and the YaRN pair check give.
_NONE_MEANS_DEFAULT = ("A setting given as None (null in a JSON config) takes its default, as "
                       "in Hugging Face: beta_fast 32, beta_slow 1, attention_factor "
                       "0.1·ln(s) + 1.")


@_reference
def _theta(dim: int, base: float) -> torch.Tensor:
    """θᵢ = base^(-2i/d) in float64, the frequencies every method starts from."""
    return base ** -(torch.arange(0, dim, 2, dtype=torch.float64) / dim)


def _random_setting(rng: random.Random) -> tuple[int, float, float]:
    """A head size from 8 to 256, a base from 1e4 to 1e6, a factor from 2 to 64."""
    return (rng.randrange(8, 257, 2), float(round(10 ** rng.uniform(4, 6), -2)),
            round(rng.uniform(2, 64), 1))


def _config(dim: int, base: float, scaling: dict) -> dict:
    return {"head_dim": dim, "rope_theta": base, "rope_scaling": scaling}


# --------------------------------------------------------------------------------------------
# 1. NTK-aware frequencies
# --------------------------------------------------------------------------------------------

# (what it is, (dim, base, factor)): the settings of the two published configs and a small head.
NTK_SETTINGS = [("Llama 3.1's head", (128, 500000.0, 8.0)),
                ("a Qwen-style head", (128, 1000000.0, 4.0)),
                ("a 16-dimensional head", (16, 10000.0, 8.0))]


def _ntk_cases(rng: random.Random) -> list[tuple[str, tuple[int, float, float]]]:
    return NTK_SETTINGS + [("a random setting", _random_setting(rng)) for _ in range(3)]


@_reference
def _ntk_variant(setting: tuple[int, float, float], mistake: str | None = None) -> torch.Tensor:
    """NTK-aware frequencies (float64) with one typical mistake built in (see `_NTK_MISTAKES`)."""
    dim, base, factor = setting
    if mistake == "pi":
        return _theta(dim, base) / factor
    if mistake == "unscaled":
        return _theta(dim, base)
    if mistake == "no_exponent":
        new_base = base * factor
    elif mistake == "inverse_exponent":
        new_base = base * factor ** ((dim - 2) / dim)
    else:
        new_base = base * factor ** (dim / (dim - 2))
    if mistake == "half_ladder":
        return new_base ** -(torch.arange(dim // 2, dtype=torch.float64) / dim)
    return _theta(dim, new_base)


_NTK_MISTAKES = {
    "pi": "you divided every frequency by s: that is position interpolation (PI). NTK-aware "
          "scaling changes the base instead, b' = b·s^(d/(d-2)), so θ₀ = 1 stays as it is",
    "no_exponent": "you multiplied the base by s; NTK-aware scaling multiplies it by "
                   "s^(d/(d-2)), the power that slows the slowest pair by exactly s",
    "inverse_exponent": "the exponent is upside down: the base grows by s^(d/(d-2)), "
                        "not s^((d-2)/d)",
    "half_ladder": "your exponent is -i/d; it is -2i/d: pair i turns at b'^(-2i/d) (2i is the "
                   "index of its first coordinate), so the last pair reaches b'^(-(d-2)/d)",
    "unscaled": "these are the original frequencies b^(-2i/d): the factor was not used; the "
                "new base is b' = b·s^(d/(d-2))",
}


# --------------------------------------------------------------------------------------------
# 2. Llama 3.1's frequencies
# --------------------------------------------------------------------------------------------

def _llama3_config(dim, base, factor, low_freq_factor, high_freq_factor, original) -> dict:
    return _config(dim, base, {"rope_type": "llama3", "factor": factor,
                               "low_freq_factor": low_freq_factor,
                               "high_freq_factor": high_freq_factor,
                               "original_max_position_embeddings": original})


# The published configs of Llama 3.1 and Llama 3.2 1B, a small head (L = 32), and one whose
# low_freq_factor, high_freq_factor and original length are none of Meta's 1, 4 and 8192 (16
# pairs kept, 5 blended, 11 divided), so that an answer with those numbers written in fails.
LLAMA3_CONFIGS = [("the config of Llama 3.1", _llama3_config(128, 500000.0, 8.0, 1.0, 4.0, 8192)),
                  ("the config of Llama 3.2 1B",
                   _llama3_config(64, 500000.0, 32.0, 1.0, 4.0, 8192)),
                  ("a 16-dimensional head's config",
                   _llama3_config(16, 10000.0, 8.0, 1.0, 4.0, 32)),
                  ("a config with low_freq_factor 2 and high_freq_factor 8",
                   _llama3_config(64, 10000.0, 16.0, 2.0, 8.0, 4096))]


@_reference
def _llama3_bands(config: dict) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Wavelengths (tokens per turn) and the masks of the fast (kept) and slow (divided) bands."""
    scaling = config["rope_scaling"]
    original = scaling["original_max_position_embeddings"]
    wavelength = 2 * math.pi / _theta(config["head_dim"], config["rope_theta"])
    return (wavelength, wavelength < original / scaling["high_freq_factor"],
            wavelength > original / scaling["low_freq_factor"])


def _random_llama3_config(rng: random.Random) -> dict:
    """A random config with at least one pair in each band (kept, blended, divided)."""
    while True:
        dim, base, factor = _random_setting(rng)
        config = _llama3_config(dim, base, factor, rng.choice([1.0, 2.0]),
                                rng.choice([4.0, 8.0]), int(2 ** rng.uniform(5, 17)))
        _, fast, slow = _llama3_bands(config)
        if fast.any() and slow.any() and not (fast | slow).all():
            return config


def _llama3_cases(rng: random.Random) -> list[tuple[str, dict]]:
    return LLAMA3_CONFIGS + [("a random config", _random_llama3_config(rng)) for _ in range(3)]


@_reference
def _llama3_variant(config: dict, mistake: str | None = None) -> torch.Tensor:
    """Llama 3.1's frequencies (float64) with one typical mistake built in."""
    scaling = config["rope_scaling"]
    factor, original = scaling["factor"], scaling["original_max_position_embeddings"]
    low, high = scaling["low_freq_factor"], scaling["high_freq_factor"]
    theta = _theta(config["head_dim"], config["rope_theta"])
    if mistake == "pi":
        return theta / factor
    if mistake == "unscaled":
        return theta
    wavelength = (1 if mistake == "no_2pi" else 2 * math.pi) / theta
    fast, slow = wavelength < original / high, wavelength > original / low
    stretched = theta * factor if mistake == "multiplied" else theta / factor
    smooth = (original / wavelength - low) / (high - low)  # 0 at the slow edge, 1 at the fast
    if mistake in ("blend_reversed", "mirrored"):
        smooth = 1 - smooth
    blended = (1 - smooth) * stretched + smooth * theta
    kept, divided = theta, (theta if mistake == "slow_kept" else stretched)
    if mistake in ("swapped", "mirrored"):
        kept, divided = stretched, theta
    return torch.where(fast, kept, torch.where(slow, divided, blended))


_SWAPPED = ("the two bands are swapped: the slow pairs (wavelength above L / low_freq_factor) "
            "are divided by the factor, the fast pairs (wavelength below L / high_freq_factor) "
            "are kept as they are")
_LLAMA3_MISTAKES = {
    "pi": "you divided every frequency by the factor: that is position interpolation. Llama 3 "
          "keeps the fast pairs (wavelength below L / high_freq_factor) and blends those between "
          "the two bands",
    "unscaled": "these are the original frequencies: the rope_scaling settings were not applied",
    "swapped": _SWAPPED,
    "mirrored": _SWAPPED,
    "no_2pi": "the wavelength of pair i is 2π/θᵢ tokens (one full turn), not 1/θᵢ",
    "blend_reversed": "the blend weights are reversed: w = (L / wavelength - "
                      "low_freq_factor) / (high_freq_factor - low_freq_factor) (Hugging Face "
                      "names it smooth) weighs the kept θᵢ and (1 - w) weighs θᵢ / factor, so "
                      "the blend meets both bands without a jump",
    "slow_kept": "the slow pairs (wavelength above L / low_freq_factor) must be divided by the "
                 "factor; yours are unchanged",
    "multiplied": "you multiplied by the factor; stretching slows the slow pairs down: divide "
                  "their θᵢ by it",
}

# Meta's numbers, as an answer copied from its reference apply_scaling writes them in: each
# setting's value there, and how the message names it.
_META_NUMBERS = {"factor": (8.0, "the factor 8"),
                 "low_freq_factor": (1.0, "low_freq_factor = 1"),
                 "high_freq_factor": (4.0, "high_freq_factor = 4"),
                 "original_max_position_embeddings": (8192, "the original 8192 tokens")}
_META_CODE = ("Meta's reference apply_scaling fixes low_freq_factor = 1 and the original 8192 "
              "tokens in its code (its first release also the factor 8 and high_freq_factor 4)")


def _written_in(keys: tuple[str, ...]) -> str:
    """The sentence for an answer with Meta's numbers for `keys` written in."""
    names = [_META_NUMBERS[key][1] for key in keys]
    listed = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    return (f"you wrote in {listed}, where the config gives its own: {_META_CODE}; read every "
            "setting from config[\"rope_scaling\"]")


# One, two, three or all four of Meta's numbers written in, the fewest first.
_WRITTEN_IN_MISTAKES = {keys: _written_in(keys) for size in range(1, len(_META_NUMBERS) + 1)
                        for keys in itertools.combinations(_META_NUMBERS, size)}


@_reference
def _llama3_written_in(config: dict, keys: tuple[str, ...]) -> torch.Tensor:
    """The right frequencies for a copy of `config` holding Meta's numbers for `keys`: what an
    answer with those numbers written in gives."""
    meta = {key: _META_NUMBERS[key][0] for key in keys}
    return _llama3_variant(_config(config["head_dim"], config["rope_theta"],
                                   dict(config["rope_scaling"], **meta)))


# --------------------------------------------------------------------------------------------
# 3. YaRN's frequencies and attention factor
# --------------------------------------------------------------------------------------------

def _yarn_config(dim, base, factor, original, **optional) -> dict:
    return _config(dim, base, {"rope_type": "yarn", "factor": factor,
                               "original_max_position_embeddings": original, **optional})


# Each one exercises a different rule: published settings (Qwen2.5 with YaRN; its ramp ends,
# 23.6 and 39.7, tell rounding outwards from round(), int() and rounding inwards), a small head
# (only 32 original tokens: the ramp would start at pair -2, clamped to 0), betas set, betas
# null (their defaults), an attention factor given (0.8, not 1, so that multiplying it with the
# default shows), a ramp end past the last pair, and ends that meet (pair 0 turns 5.1 times, fewer
# than beta_slow 8: both ends clamp to pair 0, and the ramp needs its 0.001).
YARN_CONFIGS = [
    ("the Qwen-style config", _yarn_config(128, 1000000.0, 4.0, 32768)),
    ("a 16-dimensional head's config", _yarn_config(16, 10000.0, 8.0, 32)),
    ("betas set", _yarn_config(64, 10000.0, 16.0, 4096, beta_fast=16, beta_slow=2)),
    ("null settings", _yarn_config(64, 10000.0, 8.0, 8192, beta_fast=None, beta_slow=None,
                                   attention_factor=None)),
    ("an attention_factor given", _yarn_config(96, 1000000.0, 16.0, 65536,
                                               attention_factor=0.8)),
    ("a long original context", _yarn_config(64, 10000.0, 4.0, 131072)),
    ("ramp ends that meet", _yarn_config(16, 10000.0, 8.0, 32, beta_slow=8)),
]


@_reference
def _pair_with_turns(config: dict, turns: float, circle: float = 2 * math.pi) -> float:
    """The pair index i, unrounded, that turns `turns` times over the original context:
    original·θᵢ / 2π = turns, solved for i."""
    dim, base = config["head_dim"], config["rope_theta"]
    original = config["rope_scaling"]["original_max_position_embeddings"]
    return dim * math.log(original / (turns * circle)) / (2 * math.log(base))


@_reference
def _yarn_ramp_ends(config: dict) -> tuple[float, float]:
    """The pair indices that turn beta_fast and beta_slow times, before rounding."""
    scaling = config["rope_scaling"]
    return (_pair_with_turns(config, scaling.get("beta_fast") or 32),
            _pair_with_turns(config, scaling.get("beta_slow") or 1))


@_reference
def _yarn_range(config: dict, mistake: str | None = None) -> tuple[float, float]:
    """The first and last pair of YaRN's ramp, rounded and clamped, with one mistake built in."""
    dim, scaling = config["head_dim"], config["rope_scaling"]
    beta_fast, beta_slow = scaling.get("beta_fast") or 32, scaling.get("beta_slow") or 1
    if mistake == "betas_ignored":
        beta_fast, beta_slow = 32, 1
    if mistake == "betas_swapped":
        beta_fast, beta_slow = beta_slow, beta_fast
    circle = 1 if mistake == "no_2pi" else 2 * math.pi
    # The ramp runs from the pair turning beta_fast times to the one turning beta_slow times.
    start = _pair_with_turns(config, beta_fast, circle)
    end = _pair_with_turns(config, beta_slow, circle)
    if mistake == "no_truncate":
        low, high = start, end
    elif mistake == "round":
        low, high = round(start), round(end)
    elif mistake == "int":
        low, high = int(start), int(end)
    elif mistake == "inward":
        low, high = math.ceil(start), math.floor(end)
    else:  # YaRN rounds outwards
        low, high = math.floor(start), math.ceil(end)
    if mistake != "no_clamp":
        low = max(low, 0)
    return low, min(high, dim // 2 - 1 if mistake == "pair_clamp" else dim - 1)


@_reference
def _yarn_ramp(config: dict, mistake: str | None = None) -> torch.Tensor:
    """YaRN's ramp (float64): 0 keeps a pair's θᵢ, 1 divides it by the factor."""
    low, high = _yarn_range(config, mistake)
    if low == high and mistake != "ends_meet":
        high += 0.001
    pairs = torch.arange(config["head_dim"] // 2, dtype=torch.float64)
    ramp = ((pairs - low) / (high - low)).clamp(0, 1)  # 0 / 0 is NaN where the ends meet
    return 1 - ramp if mistake == "ramp_reversed" else ramp


@_reference
def _yarn_variant(config: dict, mistake: str | None = None) -> torch.Tensor:
    """YaRN's frequencies (float64), with one typical mistake built in (`_YARN_MISTAKES`)."""
    theta = _theta(config["head_dim"], config["rope_theta"])
    if mistake == "unscaled":
        return theta
    ramp = _yarn_ramp(config, mistake)
    return theta / config["rope_scaling"]["factor"] * ramp + theta * (1 - ramp)


@_reference
def _yarn_attention(config: dict, mistake: str | None = None) -> float:
    """YaRN's factor on cos and sin, with one typical mistake built in (`_ATTENTION_MISTAKES`)."""
    scaling = config["rope_scaling"]
    default = 0.1 * math.log(scaling["factor"]) + 1
    given = scaling.get("attention_factor")
    right = default if given is None else given  # a given value replaces the default
    if mistake == "attention_missing":
        return 1.0
    if mistake == "log10":
        return 0.1 * math.log10(scaling["factor"]) + 1
    if mistake == "attention_ignored":
        return default
    if mistake == "multiplied_given":
        return default * (1.0 if given is None else given)
    if mistake == "squared":
        return right ** 2
    if mistake == "square_root":
        return math.sqrt(right)
    return right


def _yarn_regimes_ok(config: dict) -> bool:
    """Pairs kept, blended and divided all present, and the unrounded ends of the ramp at
    least 0.01 from a whole number and from a half (so float32 arithmetic can round them
    neither the other way nor, for round(), to the other neighbour)."""
    ramp = _yarn_ramp(config)
    every_regime = bool((ramp == 0).any() and (ramp == 1).any() and ((ramp > 0) & (ramp < 1)).any())
    return every_regime and all(abs(2 * end - round(2 * end)) > 0.02
                                for end in _yarn_ramp_ends(config))


def _random_yarn_config(rng: random.Random) -> dict:
    while True:
        dim, base, factor = _random_setting(rng)
        config = _yarn_config(dim, base, factor, int(2 ** rng.uniform(5, 17)))
        if _yarn_regimes_ok(config):
            return config


def _yarn_cases(rng: random.Random) -> list[tuple[str, dict]]:
    return YARN_CONFIGS + [("a random config", _random_yarn_config(rng)) for _ in range(2)]


_OUTWARDS = "YaRN rounds them outwards, floor for the start and ceil for the end"
_ENDS_MEET = ("when the two ends meet, add 0.001 to the end as Hugging Face does, or the ramp "
              "divides 0 by 0")
_YARN_MISTAKES = {
    "ramp_reversed": "the ramp is reversed: the fast pairs (more than beta_fast turns in the "
                     "original context) keep θᵢ, the slow ones (fewer than beta_slow turns) "
                     "are divided by the factor",
    "betas_swapped": "beta_fast and beta_slow are swapped: the ramp starts at the pair that "
                     "turns beta_fast times (32 by default) and ends at the one that turns "
                     "beta_slow times (1)",
    "betas_ignored": "the config's beta_fast and beta_slow were ignored: 32 and 1 are only "
                     "their defaults",
    "no_2pi": "a pair turns original·θᵢ / 2π times over the original context: count turns, "
              "not radians",
    "no_truncate": "the ends of the ramp are rounded outwards first: floor for the start, "
                   "ceil for the end",
    "round": f"the ends of the ramp are rounded to nearest (round); {_OUTWARDS}",
    "int": f"the ends of the ramp are truncated with int(); {_OUTWARDS}",
    "inward": f"floor and ceil are swapped (rounding inwards): {_OUTWARDS}",
    "no_clamp": "the start of the ramp is clamped at 0: with few original tokens even pair 0 "
                "turns fewer than beta_fast times, and the formula gives a negative index",
    "pair_clamp": "you clamped the end of the ramp to dim/2 - 1; YaRN's code and Hugging Face "
                  "clamp to dim - 1 (dim is the head size, not the number of pairs)",
    "ends_meet": _ENDS_MEET,
    "unscaled": "these are the original frequencies: the slow pairs must be divided by the "
                "factor",
}
_ATTENTION_MISTAKES = {
    "attention_missing": "the attention factor is 0.1·ln(s) + 1, not 1: YaRN sharpens the "
                         "attention that stretching blurs",
    "log10": "the attention factor uses the natural logarithm: 0.1·ln(s) + 1, not log10",
    "squared": "that is the square of the attention factor, what multiplies the logits; the "
               "factor on cos and sin is 0.1·ln(s) + 1",
    "square_root": "that is the square root of the attention factor; the factor on cos and sin "
                   "is 0.1·ln(s) + 1 itself (its square multiplies the logits)",
    "attention_ignored": "an attention_factor given in the config replaces the default "
                         "0.1·ln(s) + 1",
    "multiplied_given": "you multiplied the default by the given attention_factor (YaRN's own "
                        "code does; Hugging Face, followed here, uses the given value as it is)",
}


# --------------------------------------------------------------------------------------------
# Running the learner's function, and reading and comparing its answers
# --------------------------------------------------------------------------------------------

# Hugging Face's functions for the same formulas. The course never imports transformers, but a
# learner may (Colab has it): if it is loaded, these and every entry of ROPE_INIT_FUNCTIONS are
# refused too.
_HUGGING_FACE = ("_compute_llama3_parameters", "_compute_yarn_parameters",
                 "_compute_dynamic_ntk_parameters")


def _hugging_face() -> tuple[tuple, tuple]:
    """(Hugging Face's functions, their entries for `course_functions_hidden`), both empty
    unless transformers.modeling_rope_utils is loaded."""
    module = sys.modules.get("transformers.modeling_rope_utils")
    try:
        attributes = vars(module)
    except TypeError:  # not loaded (None), or not a module
        return (), ()
    entries = [(module, name, f"Hugging Face's {name}") for name in _HUGGING_FACE
               if callable(attributes.get(name))]
    table = attributes.get("ROPE_INIT_FUNCTIONS")
    if isinstance(table, dict):
        entries += [(table, key, f"Hugging Face's ROPE_INIT_FUNCTIONS[{key!r}]") for key in table]
    functions = [owner[key] if owner is table else attributes[key] for owner, key, _ in entries]
    return tuple(functions), tuple(entries)


def _hidden() -> tuple:
    """What is refused while the learner's code runs: every `helpers` module attribute that is
    a course function or a reference function of this module (`helpers.model.rope_inv_freq`,
    `helpers.exercises.context._llama3_variant`, ...); `_read_scaling`, which every call of the
    course's `rope_inv_freq` goes through, so that a copy kept in a list, a class or a
    functools.partial is refused too (under the name the learner knows, rope_inv_freq); and
    Hugging Face's functions, if transformers is loaded."""
    read_scaling = (rope_scaling, "_read_scaling", "rope_inv_freq")
    return hidden_names(*_COURSE, *_REFERENCE) + (read_scaling,) + _hugging_face()[1]


def _refuse_shortcut(function) -> bool:
    """True, after saying so, if the learner's function reaches a forbidden function by name."""
    for forbidden, whose in (((*_COURSE, *_REFERENCE), "the course's own answer"),
                             (_hugging_face()[0], "Hugging Face's own answer")):
        try:
            name = refers_to(function, *forbidden)
        except Exception:  # an odd callable: the hidden names still refuse it at run time
            name = None
        if name is not None:
            not_yet(f"{function_name(function)} calls `{name}`, {whose}; write it with torch "
                    "(rope_frequencies(dim, base) is allowed).")
            return True
    return False


def _frequencies(result, dim: int, call: str) -> tuple[torch.Tensor | None, str | None]:
    """The learner's frequencies as a float64 tensor `[dim // 2]`, or a sentence."""
    number = as_number(result)
    if number is not None:
        return None, (f"{call} returned one number, {number:g}; return the "
                      f"{dim // 2} frequencies, one per pair.")
    if sequence_length(result) == 2:
        try:
            second_is_number = as_number(result[1]) is not None
        except Exception:  # a list subclass whose __getitem__ raises
            second_is_number = False
        if second_is_number:
            return None, f"{call} returned a pair, like rope_inv_freq; return only the frequencies."
    tensor, problem = as_plain_tensor(result, (dim // 2,))
    if problem:
        return None, f"{call}: {problem} Return one frequency per pair, {dim // 2} for dim {dim}."
    return tensor, None


def _close(got: torch.Tensor, want: torch.Tensor, theta: torch.Tensor) -> torch.Tensor:
    """Pair by pair: within RTOL·θᵢ of the exact value (NaN is never close). Every method only
    slows pairs down, so θᵢ bounds the right answer; a mistake's value may exceed θᵢ (a slow
    pair multiplied by the factor), and is then judged relative to itself."""
    return (got - want).abs() <= RTOL * torch.maximum(theta, want.abs())


def _first_difference(answers, expected, thetas) -> tuple[int, int] | None:
    """(case, pair) of the first frequency not within RTOL·θᵢ of the exact one, or None."""
    for case, (got, want, theta) in enumerate(zip(answers, expected, thetas)):
        close = _close(got, want, theta)
        if not close.all():
            return case, int((~close).nonzero()[0])
    return None


def _named_mistake(answers, cases, thetas, mistakes: dict, variant) -> str:
    """The sentence of the first mistake whose variant, `variant(case, mistake)`, gives the
    learner's numbers on every case; "" if none does.

    Judged on every case at once: a variant that agrees with the right answer on some cases
    (the clamp only matters when the ramp starts below pair 0) is still told apart by the
    others. A NaN matches a NaN here (0 / 0 is a mistake of its own). A theta of 0 judges a
    single number, the attention factor, relative to the variant's value.
    """
    for mistake, why in mistakes.items():
        wanted = [torch.as_tensor(variant(case, mistake), dtype=torch.float64) for case in cases]
        if all(bool((_close(got, want, theta) | (got.isnan() & want.isnan())).all())
               for got, want, theta in zip(answers, wanted, thetas)):
            return why
    return ""


def _ramp_ends_meet(config: dict) -> bool:
    """True for a YaRN config whose ramp starts and ends at the same pair."""
    if config["rope_scaling"]["rope_type"] != "yarn":
        return False
    low, high = _yarn_range(config)
    return low == high


def _crash_hint(error: str, config: dict) -> str:
    """What a crash on this config usually means, to add to the crash report."""
    scaling = config["rope_scaling"]
    if not error.startswith("raised "):  # a stub, the course's function called, or sys.exit()
        return ""
    if error.startswith("raised KeyError: "):
        key = error[len("raised KeyError: "):].strip("'\"")
        if key in scaling and key not in config:
            return (f". The scaling settings sit in config[\"rope_scaling\"]: read "
                    f"config[\"rope_scaling\"][\"{key}\"].")
        if key in ("beta_fast", "beta_slow", "attention_factor"):
            return (". beta_fast, beta_slow and attention_factor are optional: read them with "
                    ".get(); a missing one takes its default (32, 1, 0.1·ln(s) + 1).")
        return (f". The config holds {sorted(config)}, and config[\"rope_scaling\"] holds "
                f"{sorted(scaling)}.")
    if error.startswith("raised AttributeError: 'dict' object has no attribute"):
        return (". config is a dict: read config[\"head_dim\"] and "
                "config[\"rope_scaling\"][\"factor\"].")
    if error.startswith("raised ZeroDivisionError") and _ramp_ends_meet(config):
        return f". Both ends of the ramp are pair {_yarn_range(config)[0]} here: {_ENDS_MEET}."
    if None in scaling.values():  # the configs before this one passed: None is the news here
        return ". " + _NONE_MEANS_DEFAULT
    return ""


def _llama3_pair(config: dict, pair: int) -> str:
    """Where pair `pair` sits among Llama 3's bands, with the numbers that decide it."""
    scaling = config["rope_scaling"]
    original = scaling["original_max_position_embeddings"]
    low, high = scaling["low_freq_factor"], scaling["high_freq_factor"]
    wavelength = 2 * math.pi / _theta(config["head_dim"], config["rope_theta"])[pair].item()
    edges = f"L / high_freq_factor = {original / high:g}, L / low_freq_factor = {original / low:g}"
    if wavelength < original / high:
        return f"its wavelength is {wavelength:,.1f} tokens, below {edges}: kept"
    if wavelength > original / low:
        return (f"its wavelength is {wavelength:,.1f} tokens, above {edges}: divided by the "
                "factor")
    smooth = (original / wavelength - low) / (high - low)
    return (f"its wavelength is {wavelength:,.1f} tokens, between {edges}: blended with "
            f"w = (L / wavelength - low_freq_factor) / (high_freq_factor - low_freq_factor) = "
            f"{smooth:.4g}, (1 - w)·θᵢ / factor + w·θᵢ")


def _yarn_pair(result, config: dict, call: str):
    """(inv_freq float64 `[dim // 2]`, attention factor, None) or (None, None, a sentence)."""
    dim, scaling = config["head_dim"], config["rope_scaling"]
    shape = (dim // 2,)
    if sequence_length(result) != 2:
        if as_plain_tensor(result, shape)[0] is not None:
            return None, None, (f"{call} returned only the frequencies; return the pair "
                                "(inv_freq, attention_factor).")
        return None, None, (f"{call} returned {type(result).__name__}; return the pair "
                            "(inv_freq, attention_factor).")
    try:
        first, second = result
    except Exception:  # a list subclass that will not unpack
        return None, None, (f"{call} returned {type(result).__name__}, which does not unpack "
                            "into two; return the pair (inv_freq, attention_factor).")
    if as_number(first) is not None and as_plain_tensor(second, shape)[0] is not None:
        return None, None, (f"{call} returned the pair in the other order: "
                            "(inv_freq, attention_factor).")
    inv_freq, problem = as_plain_tensor(first, shape)
    if problem:
        return None, None, (f"{call}: the frequencies, first in the pair: {problem} One per "
                            f"pair, {dim // 2} for head_dim {dim}.")
    if second is None:
        if None in scaling.values():
            why = (f"{_NONE_MEANS_DEFAULT} .get(key, default) still gives None when the key is "
                   "there with the value None.")
        else:
            why = "Return 0.1·ln(s) + 1, or the config's attention_factor."
        return None, None, f"{call}: the attention factor, second in the pair, is None. {why}"
    attention = one_number(second)
    if attention is None:
        too_large = isinstance(second, int) and not isinstance(second, bool)  # 10**400
        return None, None, (f"{call}: the attention factor, second in the pair, should be a "
                            + ("number a float can hold; got an int too large for a float."
                               if too_large else f"number; got {type(second).__name__}."))
    return inv_freq, attention, None


def _yarn_pair_detail(config: dict, pair: int) -> str:
    """How many turns pair `pair` makes, where the ramp runs, and so the pair's ramp."""
    dim, scaling = config["head_dim"], config["rope_scaling"]
    turns = (scaling["original_max_position_embeddings"]
             * _theta(dim, config["rope_theta"])[pair].item() / (2 * math.pi))
    low, high = _yarn_range(config)
    beyond = f" (past the last pair, {dim // 2 - 1})" if high > dim // 2 - 1 else ""
    return (f"it turns {turns:.4g} times in the original context; the ramp runs from pair "
            f"{low} to {high}{beyond}, so its ramp is {_yarn_ramp(config)[pair].item():.4g} "
            "(0 keeps θᵢ, 1 divides it by the factor)")


# --------------------------------------------------------------------------------------------
# The checks
# --------------------------------------------------------------------------------------------

def check_ntk_inv_freq(ntk_fn) -> bool:
    """`ntk_fn(dim, base, factor)` -> the dim // 2 NTK-aware frequencies b'^(-2i/d), with the
    new base b' = base·factor^(d/(d-2)). Any tensor, array or list; float32 is precise enough."""
    if unanswered(ntk_fn) or not_a_function(ntk_fn, "(dim, base, factor)"):
        return False
    if _refuse_shortcut(ntk_fn):
        return False
    name = function_name(ntk_fn)
    cases = _ntk_cases(random.Random())
    answers, coarse = [], []
    for _, (dim, base, factor) in cases:
        call = f"{name}({dim}, {base!r}, {factor!r})"
        result, error = run_settled(ntk_fn, _hidden(), dim, base, factor)
        if error:
            return report(call, error)
        new_base = base * factor ** (dim / (dim - 2))
        number = as_number(result)
        if number is not None and math.isclose(number, new_base, rel_tol=1e-4):
            return not_yet(f"{call} returned {number:,.0f}, the new base b'. Return the "
                           f"{dim // 2} frequencies b'^(-2i/d), one per pair.")
        got, problem = _frequencies(result, dim, call)
        if problem:
            return not_yet(problem)
        answers.append(got)
        coarse.append(half_precision(result))
    settings = [setting for _, setting in cases]
    expected = [_ntk_variant(setting) for setting in settings]
    thetas = [_theta(dim, base) for dim, base, _ in settings]
    difference = _first_difference(answers, expected, thetas)
    if difference is None:
        return correct(f"b' = b·s^(d/(d-2)) and θᵢ = b'^(-2i/d) on {len(cases)} settings "
                       "(Llama 3.1, Qwen-style, a 16-dimensional head and 3 random ones): "
                       "θ₀ = 1 is untouched and the slowest pair turns exactly s times slower.")
    case, pair = difference
    what, (dim, base, factor) = cases[case]
    why = TOO_COARSE if coarse[case] else _named_mistake(answers, settings, thetas,
                                                         _NTK_MISTAKES, _ntk_variant)
    new_base = base * factor ** (dim / (dim - 2))
    return not_yet(f"{name}({dim}, {base!r}, {factor!r}) ({what}): pair {pair} is "
                   f"{answers[case][pair].item():.6g}, expected {expected[case][pair].item():.6g}"
                   + (f": {why}." if why else
                      f" = b'^(-2·{pair}/{dim}) with b' = b·s^(d/(d-2)) = {new_base:,.0f}."))


def check_llama3_inv_freq(llama3_fn) -> bool:
    """`llama3_fn(config)` -> the head_dim // 2 frequencies of Llama 3.1's rule.

    config = {"head_dim": ..., "rope_theta": ..., "rope_scaling": {"rope_type": "llama3",
    "factor": ..., "low_freq_factor": ..., "high_freq_factor": ...,
    "original_max_position_embeddings": ...}}. The learner gets a copy of each config.
    """
    if unanswered(llama3_fn) or not_a_function(llama3_fn, "(config)"):
        return False
    if _refuse_shortcut(llama3_fn):
        return False
    name = function_name(llama3_fn)
    cases = _llama3_cases(random.Random())
    answers, coarse = [], []
    for what, config in cases:
        call = f"{name}(config) with {what}, {config}"
        result, error = run_settled(llama3_fn, _hidden(), copy.deepcopy(config))
        if error:
            return report(call, error + _crash_hint(error, config))
        got, problem = _frequencies(result, config["head_dim"], call)
        if problem:
            return not_yet(problem)
        answers.append(got)
        coarse.append(half_precision(result))
    configs = [config for _, config in cases]
    expected = [_llama3_variant(config) for config in configs]
    thetas = [_theta(config["head_dim"], config["rope_theta"]) for config in configs]
    difference = _first_difference(answers, expected, thetas)
    if difference is None:
        return correct(f"Llama 3.1's rule on {len(cases)} configs (Llama 3.1, Llama 3.2 1B, a "
                       "16-dimensional head, one with low_freq_factor 2 and high_freq_factor 8, "
                       "and 3 random ones), each with pairs in all three bands: the fast pairs "
                       "kept, the slow ones divided by the factor, those between blended "
                       "smoothly.")
    case, pair = difference
    what, config = cases[case]
    if coarse[case]:
        why = TOO_COARSE
    else:
        why = (_named_mistake(answers, configs, thetas, _LLAMA3_MISTAKES, _llama3_variant)
               or _named_mistake(answers, configs, thetas, _WRITTEN_IN_MISTAKES,
                                 _llama3_written_in)
               or _llama3_pair(config, pair))
    return not_yet(f"{name}(config) with {what}, {config}: pair {pair} is "
                   f"{answers[case][pair].item():.6g}, expected "
                   f"{expected[case][pair].item():.6g}; {why}.")


def check_yarn_inv_freq(yarn_fn) -> bool:
    """`yarn_fn(config)` -> (inv_freq, attention_factor), as YaRN computes them.

    config = {"head_dim": ..., "rope_theta": ..., "rope_scaling": {"rope_type": "yarn",
    "factor": s, "original_max_position_embeddings": L}}, with optional "beta_fast",
    "beta_slow" and "attention_factor" in rope_scaling (missing or None: 32, 1, 0.1·ln(s) + 1).
    inv_freq may be any tensor, array or list; the factor any number or one-element tensor.
    """
    if unanswered(yarn_fn) or not_a_function(yarn_fn, "(config)"):
        return False
    if _refuse_shortcut(yarn_fn):
        return False
    name = function_name(yarn_fn)
    cases = _yarn_cases(random.Random())
    answers, factors, coarse = [], [], []
    for what, config in cases:
        call = f"{name}(config) with {what}, {config}"
        result, error = run_settled(yarn_fn, _hidden(), copy.deepcopy(config))
        if error:
            return report(call, error + _crash_hint(error, config))
        inv_freq, attention, problem = _yarn_pair(result, config, call)
        if problem:
            return not_yet(problem)
        answers.append(inv_freq)
        factors.append(attention)
        coarse.append((half_precision(result[0]), half_precision(result[1])))
    configs = [config for _, config in cases]
    expected = [_yarn_variant(config) for config in configs]
    thetas = [_theta(config["head_dim"], config["rope_theta"]) for config in configs]
    difference = _first_difference(answers, expected, thetas)
    if difference is not None:
        case, pair = difference
        what, config = cases[case]
        if coarse[case][0]:
            why = TOO_COARSE
        else:
            why = (_named_mistake(answers, configs, thetas, _YARN_MISTAKES, _yarn_variant)
                   or _yarn_pair_detail(config, pair))
        return not_yet(f"{name}(config) with {what}, {config}: pair {pair} is "
                       f"{answers[case][pair].item():.6g}, expected "
                       f"{expected[case][pair].item():.6g}; {why}.")
    wanted = [_yarn_attention(config) for config in configs]
    for case, ((what, config), got, want) in enumerate(zip(cases, factors, wanted)):
        if math.isclose(got, want, rel_tol=RTOL):
            continue
        if coarse[case][1]:
            why = TOO_COARSE
        else:  # each factor judged relative to the variant's value (a theta of 0)
            why = _named_mistake([torch.tensor(factor, dtype=torch.float64) for factor in factors],
                                 configs, [torch.tensor(0.0, dtype=torch.float64)] * len(configs),
                                 _ATTENTION_MISTAKES, _yarn_attention)
        return not_yet(f"the frequencies are right, but {name}(config) with {what}, {config} "
                       f"gives the attention factor {got:.6g}, expected {want:.6g}"
                       + (f": {why}." if why else
                          " (0.1·ln(s) + 1, unless the config gives attention_factor)."))
    return correct(f"YaRN's frequencies and attention factor on {len(cases)} configs "
                   "(Qwen-style, a 16-dimensional head whose ramp start is clamped at 0, "
                   "betas set, betas null, an attention_factor given, a ramp end past the last "
                   "pair, ramp ends that meet, and 2 random ones): pairs turning more than "
                   "beta_fast times kept, fewer than beta_slow times divided by s, a linear "
                   "ramp between, and cos and sin scaled by 0.1·ln(s) + 1.")
