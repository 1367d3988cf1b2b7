"""Checks for notebook 07's exercises: a new position scheme, built into TinyGPT and run in the grid.

The learner writes `KerpleGPT`, a TinyGPT whose `attention_bias` adds KERPLE's logarithmic
penalty −r1·log(1 + r2·(i − j)) (Chi et al., 2022), then trains it for several seeds with
`run_grid` and measures it as section 3 measures the six schemes. Each check builds or reads the
learner's models itself, with sizes the notebook never uses, prints one verdict (see `feedback`)
and never raises: a stub, a wrong type or a crash inside the learner's code each get a sentence,
and the typical mistakes (the other sign, a missing 1 + ..., one bias for all heads, no clamp,
the same seed three times, the other evaluation) are named.
"""

from __future__ import annotations

import math
import random

import torch
from torch import nn

from helpers.evaluation import non_overlapping_loss, sliding_window_loss
from helpers.grid import seed_interval, separated
from helpers.model import TinyGPT, train_tiny_gpt
from helpers.retrieval import passkey_accuracy

from .answers import STUB, as_number, as_tensor, call_learner, refers_to, run_hidden
from .feedback import correct, not_done, not_yet, unanswered

__all__ = ["check_kerple_model", "check_kerple_in_grid", "KERPLE_FLOOR"]

# KERPLE keeps r1 and r2 positive; its reference code clamps both at 0.01 before every use.
KERPLE_FLOOR = 0.01


def _distance(length: int) -> torch.Tensor:
    """i − j for query row i and key column j, in float64; 0 above the diagonal (masked keys)."""
    positions = torch.arange(length, dtype=torch.float64)
    return (positions[:, None] - positions[None, :]).clamp(min=0)


def _kerple_bias(r1: torch.Tensor, r2: torch.Tensor, length: int,
                floor: float | None = KERPLE_FLOOR) -> torch.Tensor:
    """The answer, in float64: −r1·log(1 + r2·(i − j)) for every head, query i and key j ≤ i.

    r1 and r2 are clamped at `floor` first (None: used as they are). Entries above the
    diagonal (future keys) are 0 here; the model masks them anyway. Differentiable in r1 and
    r2 (the gradient check uses that); pass detached values for a plain comparison.
    """
    r1, r2 = r1.double(), r2.double()
    if floor is not None:
        r1, r2 = r1.clamp(min=floor), r2.clamp(min=floor)
    return -r1[:, None, None] * torch.log1p(r2[:, None, None] * _distance(length))


# --------------------------------------------------------------------------------------------
# 1. KERPLE's bias in a TinyGPT subclass
# --------------------------------------------------------------------------------------------

def _kerple_variants(r1: torch.Tensor, r2: torch.Tensor, length: int) -> dict[str, torch.Tensor]:
    """The typical wrong biases, each with the sentence that names it (float64, lower triangle)."""
    distance = _distance(length)
    a = r1.detach().double()[:, None, None]
    b = r2.detach().double()[:, None, None]
    right = -a * torch.log1p(b * distance)
    reparametrised = ("a fine way to keep them positive, but here they are the values "
                      "themselves, clamped at 0.01 (no softplus or exp), so that r1 and r2 read "
                      "as what they are")
    return {
        "the sign is flipped: KERPLE's bias is a penalty, −r1·log(1 + r2·(i − j)), so that "
        "far keys lose score, never gain it": -right,
        "r1 and r2 are swapped: r1 multiplies the logarithm, r2 scales the distance inside "
        "it": -b * torch.log1p(a * distance),
        "r2 is missing inside the logarithm: log(1 + r2·(i − j)), so that each head also "
        "learns how fast its penalty bends": -a * torch.log1p(distance),
        "that is a straight line in the distance, ALiBi's shape; KERPLE takes the logarithm "
        "of 1 + r2·(i − j), so the penalty grows ever more slowly": -a * b * distance,
        "that is a logarithm to base 10; KERPLE's is the natural logarithm, torch.log or "
        "torch.log1p": -a * torch.log10(1 + b * distance),
        "that is a logarithm to base 2; KERPLE's is the natural logarithm, torch.log or "
        "torch.log1p": -a * torch.log2(1 + b * distance),
        f"r1 and r2 pass through softplus: {reparametrised}": -nn.functional.softplus(a)
        * torch.log1p(nn.functional.softplus(b) * distance),
        f"r1 and r2 pass through exp: {reparametrised}": -a.exp() * torch.log1p(
            b.exp() * distance),
    }


def _lower(tensor: torch.Tensor) -> torch.Tensor:
    """Only the entries that matter: keys at or before the query (the rest is masked)."""
    length = tensor.shape[-1]
    keep = torch.ones(length, length, dtype=torch.bool).tril()
    return tensor[..., keep]


def _read_bias(model, length: int, n_heads: int, call: str) -> tuple[torch.Tensor | None, str]:
    """(the bias as a float64 [heads, T, T] tensor, "") or (None, a sentence)."""
    got, error = run_hidden(model.attention_bias, _HIDDEN, length, torch.device("cpu"))
    if error == STUB:
        return None, "stub"
    if error:
        return None, f"{call} {error}"
    got, problem = as_tensor(got)
    if problem:
        return None, f"{call}: {problem}"
    if got.dim() == 4 and got.shape[0] == 1:
        got = got[0]  # [1, heads, T, T] broadcasts over the batch just as well
    if tuple(got.shape) == (length, length):
        return None, (f"{call} has shape [{length}, {length}]: one bias for every head. KERPLE "
                      f"learns r1 and r2 per head, so return [n_heads, T, T] = [{n_heads}, "
                      f"{length}, {length}] (index r1 and r2 with [:, None, None]).")
    if tuple(got.shape) != (n_heads, length, length):
        return None, (f"{call} has shape {list(got.shape)}; expected [n_heads, T, T] = "
                      f"[{n_heads}, {length}, {length}] (rows are queries, columns keys).")
    return got, ""


def _bias_mistake(got: torch.Tensor, r1: torch.Tensor, r2: torch.Tensor, length: int) -> str:
    """The name of a typical mistake that produces `got` (lower triangle), or ""."""
    low = _lower(got)
    diagonal = got.diagonal(dim1=-2, dim2=-1)
    if not torch.isfinite(diagonal).all():
        return ("the diagonal (a query and its own key, distance 0) is not finite: log(0). The "
                "1 + inside log(1 + r2·(i − j)) keeps the bias at exactly 0 there")
    if torch.isnan(low).any():
        return ("NaN below the diagonal: the logarithm met a negative number. The distance is "
                "i − j (query row minus key column), never negative for a key the query can see")
    if torch.allclose(low, torch.zeros_like(low)):
        return ("the bias is 0 wherever it counts: keys before the query sit below the "
                "diagonal (row i = query, column j = key), where the distance i − j is positive")
    for why, variant in _kerple_variants(r1, r2, length).items():
        if torch.allclose(low, _lower(variant), rtol=1e-4, atol=1e-5):
            return why
    offset = (got - _kerple_bias(r1, r2, length)).tril()
    per_query = offset[..., :1].expand_as(offset).tril()
    if torch.allclose(offset, per_query, atol=1e-5):
        return ("your bias is KERPLE's plus a constant for each query: softmax ignores such a "
                "constant, so the attention is the same, but the exercise asks for KERPLE's own "
                "form, which is 0 at distance 0")
    return ""


_HIDDEN = ("helpers.exercises.compare._kerple_bias",)  # refused while the learner's code runs

_SIZES = [  # (n_heads, head_dim, context_length, n_layers): 07's model, then odd ones
    (4, 16, 32, 2), (3, 8, 8, 1), (1, 4, 5, 1)]


def _random_size(rng: random.Random) -> tuple[int, int, int, int]:
    return rng.choice([2, 5, 6, 7]), rng.choice([2, 4, 6, 8]), rng.randint(4, 24), rng.randint(1, 3)


def _fresh_values(parameter: torch.Tensor, low: float, high: float,
                  generator: torch.Generator) -> torch.Tensor:
    return low + (high - low) * torch.rand(parameter.shape, generator=generator)


def check_kerple_model(model_class) -> bool:
    """`model_class(vocab_size, context_length, d_model=..., n_heads=..., n_layers=...)` must be
    a TinyGPT with position "none", parameters `r1` and `r2` of shape [n_heads], and an
    `attention_bias(length, device)` that returns KERPLE's bias, clamped at 0.01, [heads, T, T].

    Tried on 07's sizes and odd ones (1, 3 and random head counts), at 3x the context length,
    with values of r1 and r2 the check sets (also negative ones, for the clamp); the bias's
    gradient with respect to r1 and r2 must be KERPLE's, and a training step must reach them.
    The learner's random state is left as it was.
    """
    if unanswered(model_class):
        return False
    if not isinstance(model_class, type):
        return not_yet("pass the class KerpleGPT itself (not an instance of it, not a string).")
    if not issubclass(model_class, TinyGPT):
        return not_yet("KerpleGPT must be a subclass of TinyGPT: `class KerpleGPT(TinyGPT):`, "
                       "so that it keeps the model and overrides attention_bias.")
    if model_class.attention_bias is TinyGPT.attention_bias:
        return not_yet("KerpleGPT does not override attention_bias(self, length, device), the "
                       "method TinyGPT calls for the bias it adds to every logit.")
    if refers_to(model_class.attention_bias, _kerple_bias) or refers_to(
            model_class.__init__, _kerple_bias):
        return not_yet("your class calls the check's own answer (_kerple_bias); write the bias "
                       "with torch operations instead.")
    with torch.random.fork_rng():  # building models draws from the learner's random state
        return _check_kerple_model(model_class)


def _check_parameters(model, n_heads: int, call: str) -> tuple[tuple | None, str]:
    """((r1, r2), "") when both are per-head nn.Parameters of the model, else (None, why)."""
    parameters = dict(model.named_parameters())
    found = []
    for name in ("r1", "r2"):
        value = getattr(model, name, None)
        if value is None:
            return None, (f"{call} has no attribute {name}; store KERPLE's two per-head values "
                          "as self.r1 and self.r2.")
        if found and (value is found[0] or (isinstance(value, torch.Tensor) and
                                            value.data_ptr() == found[0].data_ptr())):
            return None, ("self.r1 and self.r2 are the same parameter (or share its storage): "
                          "KERPLE learns two separate values per head.")
        if not isinstance(value, nn.Parameter):
            return None, (f"self.{name} is a plain tensor, not an nn.Parameter: the optimiser "
                          "would never see it, and KERPLE learns both values.")
        if parameters.get(name) is not value:
            return None, (f"self.{name} is an nn.Parameter registered under another name; assign "
                          f"it directly, self.{name} = nn.Parameter(...), so that it reads as "
                          "KERPLE's value.")
        if tuple(value.shape) != (n_heads,):
            return None, (f"self.{name} has shape {list(value.shape)} in {call}; it holds one "
                          f"value per head: shape [n_heads] = [{n_heads}].")
        found.append(value)
    return tuple(found), ""


def _gradient_problem(model, r1, r2, length: int, generator: torch.Generator) -> str:
    """"" if the bias's gradient with respect to r1 and r2 is KERPLE's, else why not."""
    weights = torch.randn(r1.shape[0], length, length, generator=generator).tril()
    model.zero_grad(set_to_none=True)
    got, error = run_hidden(model.attention_bias, _HIDDEN, length, torch.device("cpu"))
    connected = isinstance(got, torch.Tensor) and got.requires_grad
    if error is None and connected:
        _, error = call_learner(lambda: (got.squeeze(0).double() * weights).sum().backward())
    if error:
        return f"a backward pass through attention_bias {error}."
    if connected and r1.grad is not None and r2.grad is not None and not (
            torch.isfinite(r1.grad).all() and torch.isfinite(r2.grad).all()):
        return ("r1 or r2 gets a NaN gradient: the entries above the diagonal are not finite. "
                "The mask hides them in the forward pass, but the backward pass multiplies "
                "them by 0, and 0 · NaN = NaN. Clamp i − j at 0 (any finite value will do there).")
    if not connected or r1.grad is None or r2.grad is None or not (r1.grad.abs().sum() > 0
                                                  and r2.grad.abs().sum() > 0):
        return ("the bias gives r1 or r2 no gradient: it has been cut from them (.detach(), "
                ".item(), .tolist(), torch.tensor(...), .data or requires_grad=False), so "
                "training could never change them. Compute it from self.r1 and self.r2 with "
                "torch operations.")
    reference = [r1.detach().clone().requires_grad_(), r2.detach().clone().requires_grad_()]
    (_kerple_bias(*reference, length) * weights).sum().backward()
    if not (torch.allclose(r1.grad.double(), reference[0].grad.double(), rtol=1e-3, atol=1e-4)
            and torch.allclose(r2.grad.double(), reference[1].grad.double(), rtol=1e-3,
                               atol=1e-4)):
        return ("the bias has the right values but not the right gradient with respect to r1 "
                "and r2: training would move them the wrong way. Build it from self.r1 and "
                "self.r2 directly, with nothing detached.")
    return ""


def _check_kerple_model(model_class) -> bool:
    rng = random.Random()
    generator = torch.Generator().manual_seed(rng.randrange(2 ** 31))
    sizes = _SIZES + [_random_size(rng)]
    for n_heads, head_dim, context, n_layers in sizes:
        vocab = rng.randint(20, 60)
        call = (f"KerpleGPT({vocab}, {context}, d_model={n_heads * head_dim}, "
                f"n_heads={n_heads}, n_layers={n_layers})")
        torch.manual_seed(rng.randrange(2 ** 31))
        model, error = call_learner(model_class, vocab, context, d_model=n_heads * head_dim,
                                    n_heads=n_heads, n_layers=n_layers)
        if error:
            return not_yet(f"{call} {error}. Take TinyGPT's arguments and pass them on: "
                           "def __init__(self, vocab_size, context_length, **kwargs).")
        if getattr(model, "position", None) != "none":
            return not_yet(f"{call} has position={getattr(model, 'position', None)!r}; build it "
                           "on position=\"none\", so that KERPLE's bias is the model's only "
                           "position information.")
        _, error = run_hidden(model.attention_bias, _HIDDEN, 4, torch.device("cpu"))
        if error == STUB:
            return not_done("attention_bias returns None; write its body (and the two "
                            "parameters in __init__), then run this cell again.")
        found, problem = _check_parameters(model, n_heads, call)
        if problem:
            return not_yet(problem)
        r1, r2 = found
        length = 3 * context + 1  # well past the trained length, where KERPLE is meant to work
        bias_call = f"attention_bias({length}, cpu) of {call}"
        previous = None
        for label in ("positive", "clamp"):
            with torch.no_grad():
                r1.copy_(_fresh_values(r1, 0.2, 3.0, generator))
                r2.copy_(_fresh_values(r2, 0.05, 2.0, generator))
                if label == "clamp":  # values below the floor, where training can push them
                    r1[0] = -0.5
                    r2[-1] = -0.3
                    if n_heads > 1:
                        r2[0] = 0.004
            used_r1, used_r2 = r1.detach().clone(), r2.detach().clone()
            got, problem = _read_bias(model, length, n_heads, bias_call)
            if problem == "stub":
                return not_done(f"{bias_call} returns None; write its body, then run this "
                                "cell again.")
            if problem:
                return not_yet(problem)
            expected = _kerple_bias(used_r1, used_r2, length)
            if torch.allclose(_lower(got), _lower(expected), rtol=1e-4, atol=1e-5):
                previous = got
                continue
            if previous is not None and torch.equal(got, previous):
                return not_yet(f"{bias_call} did not change when r1 and r2 did: the bias must "
                               "be computed from them at every call (nothing cached), or "
                               "training could not move it.")
            if label == "clamp":
                unclamped = _kerple_bias(used_r1, used_r2, length, floor=None)
                if torch.allclose(_lower(got), _lower(unclamped), rtol=1e-4, atol=1e-5,
                                  equal_nan=True):
                    return not_yet(
                        f"with r1[0] = -0.5 and r2[{n_heads - 1}] = -0.3 (training can push them "
                        f"there) your bias uses them as they are: a negative r1 rewards far keys "
                        f"and a negative r2 makes log(1 + r2·(i − j)) undefined past 1/|r2| "
                        f"tokens. Clamp both at {KERPLE_FLOOR} inside attention_bias (the check "
                        f"calls it directly): in the formula (.clamp(min={KERPLE_FLOOR})) or on "
                        f"the stored values (self.r1.data.clamp_(min={KERPLE_FLOOR})).")
                half = {
                    "only r1 is clamped; r2 needs the same floor": (
                        used_r1.clamp(min=KERPLE_FLOOR), used_r2),
                    "only r2 is clamped; r1 needs the same floor": (
                        used_r1, used_r2.clamp(min=KERPLE_FLOOR)),
                    f"clamped at 0 rather than {KERPLE_FLOOR}: a value of 0 switches the head's "
                    "penalty off, and KERPLE keeps both strictly positive": (
                        used_r1.clamp(min=0), used_r2.clamp(min=0)),
                    f".abs() turns -0.5 into 0.5, a value training never chose; clamp at "
                    f"{KERPLE_FLOOR} instead": (used_r1.abs(), used_r2.abs()),
                }
                for why, (a, b) in half.items():
                    if torch.allclose(_lower(got), _lower(_kerple_bias(a, b, length, floor=None)),
                                      rtol=1e-4, atol=1e-5, equal_nan=True):
                        return not_yet(f"with r1[0] = -0.5 and r2[{n_heads - 1}] = -0.3: {why}.")
                return not_yet(f"with r1[0] = -0.5 and r2[{n_heads - 1}] = -0.3, {bias_call} "
                               f"is not the bias with both clamped at {KERPLE_FLOOR}. Use "
                               f"r1.clamp(min={KERPLE_FLOOR}) and r2.clamp(min={KERPLE_FLOOR}) "
                               "themselves (no softplus or exp), so that r1 and r2 read as what "
                               "they are.")
            why = _bias_mistake(got, used_r1, used_r2, length)
            close = torch.isclose(got, expected, rtol=1e-4, atol=1e-5) | ~torch.ones(
                length, length, dtype=torch.bool).tril()
            head, i, j = (~close).nonzero()[0].tolist()
            return not_yet(f"{bias_call}: head {head}, query {i}, key {j} holds "
                           f"{got[head, i, j].item():.4g}, expected −r1·log(1 + r2·{i - j}) = "
                           f"{expected[head, i, j].item():.4g}"
                           + (f": {why}." if why else "."))
        with torch.no_grad():
            r1.copy_(_fresh_values(r1, 0.2, 3.0, generator))
            r2.copy_(_fresh_values(r2, 0.05, 2.0, generator))
        problem = _gradient_problem(model, r1, r2, length, generator)
        if problem:
            return not_yet(problem)
        # The bias must also reach the logits: one forward and backward pass of the model.
        ids = torch.randint(0, vocab, (2, length), generator=generator)
        model.zero_grad(set_to_none=True)
        logits, error = run_hidden(model, _HIDDEN, ids)
        if error:
            return not_yet(f"{call} on {length} tokens (3x its context) {error}.")
        logits, problem = as_tensor(logits, shape=(2, length, vocab))
        if problem:
            return not_yet(f"{call} on {length} tokens: {problem} Leave forward to TinyGPT.")
        _, error = call_learner(lambda: model(ids).logsumexp(-1).mean().backward())
        if error or r1.grad is None or not torch.isfinite(r1.grad).all() or not (
                r1.grad.abs().sum() > 0):
            return not_yet(f"a training step of {call} does not reach r1: TinyGPT.forward "
                           "must use your attention_bias (leave forward as it is).")
    return correct(f"KERPLE's bias −r1·log(1 + r2·(i − j)) on {len(sizes)} model sizes (4, 3 and "
                   f"1 heads and a random count) at 3x their context, clamped at {KERPLE_FLOOR}, "
                   "with KERPLE's gradient for r1 and r2, and a training step reaches them.")


# --------------------------------------------------------------------------------------------
# 2. KERPLE in the grid
# --------------------------------------------------------------------------------------------

EVALUATION_LENGTH = 128  # 4x the trained 32 tokens, as in section 3
SLIDING = "sliding windows (stride L/4)"


def _section_7_loss(model, train_ids: torch.Tensor, length: int) -> float:
    """The sliding-window loss exactly as section 3 computes it."""
    return sliding_window_loss(model, train_ids, length, stride=length // 4, max_windows=16)


def _other_measure(model, train_ids: torch.Tensor, loss: float) -> str:
    """Which other measurement gives `loss`, named, or ""."""
    others = {
        "the non-overlapping loss; section 3 shows why it flatters long windows (the early-token "
        "curse): use sliding_window_loss": non_overlapping_loss(model, train_ids,
                                                                EVALUATION_LENGTH, max_windows=16),
        f"the loss at the trained length, 32 tokens; the question is how KERPLE does at "
        f"{EVALUATION_LENGTH}, four times longer": _section_7_loss(model, train_ids, 32),
        "the sliding-window loss over every window; use max_windows=16 as section 3 does, so "
        "the numbers compare": sliding_window_loss(model, train_ids, EVALUATION_LENGTH,
                                                   stride=EVALUATION_LENGTH // 4),
    }
    for why, value in others.items():
        if math.isclose(loss, value, rel_tol=1e-4, abs_tol=1e-6):
            return why
    return ""


def _same_weights(first: nn.Module, second: nn.Module, atol: float = 0.0) -> bool:
    one, other = first.state_dict(), second.state_dict()
    return one.keys() == other.keys() and all(
        one[k].shape == other[k].shape
        and torch.allclose(one[k].cpu().double(), other[k].cpu().double(), rtol=0, atol=atol)
        for k in one)


def _size_problem(model: TinyGPT, settings: dict) -> str:
    """"" if the model has section 2's size, else which setting differs."""
    actual = {"vocab_size": model.tokens.num_embeddings, "context_length": model.context_length,
              "d_model": model.tokens.embedding_dim, "n_heads": model.n_heads,
              "n_layers": len(model.blocks)}
    for name, value in actual.items():
        if name in settings and settings[name] != value:
            return f"{name}={value}, where section 2's settings say {settings[name]}"
    return ""


def _adds_kerple_bias(model: TinyGPT) -> bool:
    """True if the model's bias is KERPLE's for its own r1 and r2 (on the model's device)."""
    length = 2 * model.context_length
    device = next(model.parameters()).device
    got, error = run_hidden(model.attention_bias, _HIDDEN, length, device)
    got, problem = (None, error) if error else as_tensor(
        got.detach().cpu() if isinstance(got, torch.Tensor) else got)
    if problem or got.shape[-2:] != (length, length):
        return False
    got = got.reshape(-1, length, length)
    expected = _kerple_bias(model.r1.detach().cpu(), model.r2.detach().cpu(), length)
    return got.shape == expected.shape and torch.allclose(_lower(got), _lower(expected),
                                                          rtol=1e-4, atol=1e-5)


def _read_runs(kerple_runs) -> tuple[list | None, str]:
    """(the list of (model, loss) pairs, "") or (None, a sentence)."""
    if callable(kerple_runs):
        return None, ("pass what run_grid returned, {\"kerple\": [(model, loss), ...]}, not the "
                      "experiment function itself.")
    if not isinstance(kerple_runs, dict) or "kerple" not in kerple_runs:
        return None, ("expected run_grid's result, a dict {\"kerple\": [(model, loss), ...]}; "
                      f"got {type(kerple_runs).__name__}"
                      + (f" with keys {sorted(map(str, kerple_runs))}"
                         if isinstance(kerple_runs, dict) else "") + ".")
    runs = kerple_runs["kerple"]
    if not isinstance(runs, (list, tuple)) or not runs:
        return None, "run_grid gave no runs for \"kerple\": pass it the list of seeds."
    for run in runs:
        if isinstance(run, (list, tuple)) and len(run) == 2 and isinstance(run[1], dict) and (
                "train" in run[1]):
            return None, ("each run returns (model, history), train_tiny_gpt's record of the "
                          "training: return the sliding-window loss at 128 tokens in its place.")
        if not (isinstance(run, (list, tuple)) and len(run) == 2):
            return None, ("each seed's result must be a pair (model, loss): return "
                          "`model, loss` from kerple_experiment.")
    return list(runs), ""


def _lesson_problem(train_ids, settings, budget, task, seeds, by_evaluation) -> str:
    """"" if the lesson's objects were passed as the exercise cell passes them, else why not."""
    if not (isinstance(train_ids, torch.Tensor) and train_ids.dim() == 1
            and not train_ids.is_floating_point() and len(train_ids) > EVALUATION_LENGTH):
        return "pass the lesson's train_ids (a 1-D tensor of token ids) as train_ids."
    try:
        alibi = [float(run[EVALUATION_LENGTH]) for run in by_evaluation[SLIDING]["alibi"]]
        ok = (alibi and int(settings["context_length"]) > 0 and isinstance(budget, dict)
              and hasattr(task, "training_batch") and len(list(seeds)) >= 2)
    except (TypeError, KeyError, IndexError, ValueError, AttributeError):
        ok = False
    if not ok:
        return ("pass the lesson's own settings, budget, task, seeds and by_evaluation, as the "
                "exercise cell does.")
    return ""


def _recipe_model(model_class, seed: int, train_ids, settings: dict, budget: dict, task):
    """What section 2's recipe gives for this class and seed."""
    torch.manual_seed(seed)
    model = model_class(**settings)
    train_tiny_gpt(model, train_ids, seed=seed, task=task, progress=False, **budget)
    return model


def check_kerple_in_grid(kerple_runs, *, train_ids: torch.Tensor, settings: dict, budget: dict,
                         task, seeds, by_evaluation: dict) -> bool:
    """`kerple_runs` is what `run_grid(kerple_experiment, ["kerple"], seeds)` returns:
    {"kerple": [(trained KerpleGPT, its sliding-window loss at 128 tokens), one per seed]}.

    Each model must be exercise 1's KERPLE with section 2's `settings`, one per seed; the first
    seed's model is trained again with section 2's recipe (`torch.manual_seed(seed)`, then
    `train_tiny_gpt(..., seed=seed, task=task, **budget)`, about 6 s) and must come out the
    same. Every model is measured again as section 3 does (stride 32, 16 windows of the
    training text), and the seeds' 95% interval is set beside ALiBi's from `by_evaluation`.
    """
    if unanswered(kerple_runs):
        return False
    runs, problem = _read_runs(kerple_runs)
    if problem:
        return not_yet(problem)
    problem = _lesson_problem(train_ids, settings, budget, task, seeds, by_evaluation)
    if problem:
        return not_yet(problem)
    seeds = list(seeds)
    if len(runs) != len(seeds):
        return not_yet(f"{len(runs)} runs for {len(seeds)} seeds: run the grid with section 2's "
                       "seeds, run_grid(kerple_experiment, [\"kerple\"], seeds).")
    alibi = [float(run[EVALUATION_LENGTH]) for run in by_evaluation[SLIDING]["alibi"]]
    models, losses = [], []
    for number, (model, loss) in enumerate(runs):
        if not isinstance(model, TinyGPT):
            return not_yet(f"run {number} returned {type(model).__name__} where the trained "
                           "model belongs: return the KerpleGPT you trained.")
        if getattr(model, "r1", None) is None or getattr(model, "r2", None) is None:
            return not_yet(f"run {number}'s model is a plain TinyGPT without r1 and r2: build "
                           "KerpleGPT from exercise 1 when the row is \"kerple\".")
        if model.position != "none":
            return not_yet(f"run {number}'s model has position={model.position!r}: KerpleGPT "
                           "is built on position=\"none\" (exercise 1).")
        _, problem = _check_parameters(model, model.n_heads, f"run {number}'s model")
        if problem or not _adds_kerple_bias(model):
            return not_yet(f"run {number}'s model does not add KERPLE's bias "
                           "−r1·log(1 + r2·(i − j)): make exercise 1 print Correct first.")
        different = _size_problem(model, settings)
        if different:
            return not_yet(f"run {number}'s model has {different}: build it with "
                           "KerpleGPT(**settings), so that it differs from the six schemes in "
                           "its position scheme alone.")
        value = as_number(loss)
        if value is None or not math.isfinite(value):
            return not_yet(f"run {number}'s loss is {loss!r}; expected a number (nats per "
                           "token).")
        models.append(model)
        losses.append(value)
    for a in range(len(models)):
        for b in range(a + 1, len(models)):
            if models[a] is models[b] or _same_weights(models[a], models[b]):
                return not_yet(f"runs {a} and {b} hold the same weights: the seed never reached "
                               "the model. Call torch.manual_seed(seed) before building it and "
                               "pass seed=seed to train_tiny_gpt.")
    with torch.random.fork_rng():
        again, error = run_hidden(_recipe_model, _HIDDEN, type(models[0]), seeds[0], train_ids,
                                  settings, budget, task)
    if error:
        return not_yet(f"training KerpleGPT again for seed {seeds[0]} {error}.")
    on_cpu = next(models[0].parameters()).device.type == "cpu"
    same = _same_weights(again, models[0], atol=1e-5) or (not on_cpu and math.isclose(
        _section_7_loss(again, train_ids, EVALUATION_LENGTH), losses[0], abs_tol=0.05))
    if not same:
        context = models[0].context_length
        found = passkey_accuracy(models[0], task, train_ids, context, (1, context - 2),
                                 count=20, seed=1)
        missing_task = (" It names " + f"{found:.0%}" + " of the passkeys at the trained length: "
                        "it was trained without task=task.") if found < 0.5 else ""
        return not_yet(f"seed {seeds[0]}'s model is not what section 2's recipe gives. Build it "
                       "after torch.manual_seed(seed) and train it with "
                       "train_tiny_gpt(model, train_ids, seed=seed, task=task, progress=False, "
                       "**budget): the same steps, learning rate and game as the six schemes, "
                       "or the comparison is unfair." + missing_task)
    measured = []
    for number, (model, loss) in enumerate(zip(models, losses)):
        model.eval()
        again, error = run_hidden(_section_7_loss, _HIDDEN, model, train_ids, EVALUATION_LENGTH)
        if error:
            return not_yet(f"measuring run {number}'s model {error}.")
        if not math.isclose(loss, again, rel_tol=1e-4, abs_tol=1e-6):
            why = _other_measure(model, train_ids, loss)
            return not_yet(f"run {number} reports {loss:.4f} nats; its sliding-window loss at "
                           f"{EVALUATION_LENGTH} tokens (stride {EVALUATION_LENGTH // 4}, 16 "
                           f"windows of train_ids) is {again:.4f}"
                           + (f": yours is {why}." if why else "."))
        measured.append(again)
    kerple = seed_interval(measured)
    alibi = seed_interval(alibi)
    (kerple_mean, kerple_low, kerple_high), (alibi_mean, alibi_low, alibi_high) = kerple, alibi
    if separated(kerple, alibi):
        better = "KERPLE" if kerple_mean < alibi_mean else "ALiBi"
        verdict = f"the 95% intervals do not overlap: {better} is better here"
    else:
        verdict = "the 95% intervals overlap: these seeds do not separate the two"
    return correct(f"{len(measured)} seeds, trained as the six schemes were, each model measured "
                   f"again. At {EVALUATION_LENGTH} tokens KERPLE has {kerple_mean:.2f} nats "
                   f"[{kerple_low:.2f}, {kerple_high:.2f}], ALiBi {alibi_mean:.2f} "
                   f"[{alibi_low:.2f}, {alibi_high:.2f}]; {verdict}.")
