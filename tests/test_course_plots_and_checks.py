"""Figures of notebooks 01, 02, 07 and 08: each is labelled and renders. (The exercise checks
have their own tables in tests/exercises/.)"""


import matplotlib
import pytest
import torch
from matplotlib.figure import Figure

matplotlib.use("Agg")

from helpers.plots import compare as compare_plots  # noqa: E402
from helpers.plots import context as context_plots  # noqa: E402
from helpers.plots import dataloader as dataloader_plots  # noqa: E402
from helpers.plots import tokens as token_plots  # noqa: E402
from helpers.rope_scaling import rope_inv_freq  # noqa: E402
from helpers.widgets import figure_png  # noqa: E402

LOSSES = {"rope": {32: 0.2, 64: 0.5}, "alibi": {32: 0.3, 64: 0.25}, "learned": {32: 0.1}}
HISTORY = {"step": [50, 100], "train": [3.0, 1.0], "val": [5.0, 6.0]}


def labelled(fig):
    assert isinstance(fig, Figure)
    for ax in fig.axes:
        if ax.get_label() == "<colorbar>":
            continue
        assert ax.get_xlabel() or ax.get_ylabel(), "an unlabelled panel"
    assert figure_png(fig).startswith(b"\x89PNG")
    return True


@pytest.mark.parametrize("make", [
    lambda: token_plots.plot_token_vectors(["a", "b"], torch.randn(2, 8)),
    lambda: token_plots.plot_reordered_outputs(["a", "b"], torch.randn(2, 4), ["b", "a"],
                                               torch.randn(2, 4, requires_grad=True)),
    lambda: dataloader_plots.plot_sliding_windows(4, 4),
    lambda: dataloader_plots.plot_sliding_windows(16, 1),
    lambda: dataloader_plots.plot_sliding_windows(12, 16),
    lambda: dataloader_plots.plot_input_embeddings(torch.randn(4, 8), torch.randn(4, 8),
                                                   torch.randn(4, 8), ["a", "b", "c", "d"]),
    lambda: compare_plots.plot_training_curves({"rope": HISTORY, "alibi": HISTORY}),
    lambda: compare_plots.plot_loss_vs_length({"training text": LOSSES}, 32),
    lambda: context_plots.plot_rotation_angles(16, 32, 256),
    lambda: context_plots.plot_scaled_frequencies(16, 8.0, 32),
    lambda: context_plots.plot_scaled_frequencies(256, 64.0, 32),
    lambda: context_plots.plot_extension_losses({"as is": {"YaRN": {32: 1.0, 64: 2.0}}}, 32),
])
def test_figures_are_labelled_and_render(make):
    assert labelled(make())


def test_reordered_outputs_carry_the_title_they_are_given():
    outputs = torch.randn(2, 4)
    default = token_plots.plot_reordered_outputs(["a", "b"], outputs, ["b", "a"], outputs[[1, 0]])
    assert "without positions" in default.get_suptitle()
    added = token_plots.plot_reordered_outputs(["a", "b"], outputs, ["b", "a"], outputs,
                                               title="Position vectors added")
    assert added.get_suptitle() == "Position vectors added"


def test_sliding_windows_title_counts_windows_of_the_drawn_text():
    fig = dataloader_plots.plot_sliding_windows(4, 4, num_tokens=40)
    assert fig.axes[0].get_title() == "max_length=4, stride=4: 9 windows from a 40-token text"
    assert fig.axes[1].get_xlabel() == "token index"


def test_window_starts_follow_the_dataset_rule():
    assert dataloader_plots.window_starts(10, 4, 3) == [0, 3]
    assert dataloader_plots.window_starts(5, 4, 1) == [0]


def test_scaling_settings_cover_every_method():
    settings = context_plots.scaling_settings(8.0, 32)
    assert settings["no scaling"] is None
    for scaling in settings.values():
        rope_inv_freq(16, 10000.0, scaling)  # every one is a valid rope_scaling dict
