"""Positions in two dimensions: image patches, and text beside images.

A vision transformer cuts an image into a grid of patches and reads them as one sequence, row by
row ("raster order"). Each 1-D scheme of the course has a 2-D form that real models use, and
each is built here from the 1-D module it extends:

    patch_grid            the (row, column) of every patch, in raster order
    patchify              an image cut into flattened patches, as ViT feeds them in
    sinusoidal_table_2d   MAE's fixed table: half the dimensions are a 1-D sinusoidal table
                          (`helpers.absolute`) of the column, half of the row
    apply_rope_2d         axial RoPE: half of each head turned by the row, half by the column,
                          each half a 1-D RoPE (`helpers.rope.apply_rope`) of size dim/2
    mrope_position_ids    Qwen2-VL's (time, height, width) position ids for text and images in
                          one sequence
    apply_mrope           the rotation with them: three sections of the pairs follow t, h and w
    interpolate_table_2d  a table of one vector per patch resized to another grid, bicubic, as
                          MAE's `interpolate_pos_embed` does before fine-tuning at a new size
    scaled_patch_grid     EVA-02's RoPE positions for a new grid: each axis squeezed into the
                          range of the pretraining grid, t = arange(n) / n · n_trained

Conventions, each checked against the reference code (the notebook and the peer tests say more):
- Patches are numbered in raster order, index = row · width + column (ViT, MAE; Qwen2-VL's
  merged tokens). Qwen2-VL's vision encoder orders its patches in 2 x 2 merge blocks and passes
  each patch's (row, column) explicitly, which `apply_rope_2d` accepts as they are.
- `sinusoidal_table_2d` is MAE's `get_2d_sincos_pos_embed`, layout [sin(col) | cos(col) |
  sin(row) | cos(row)]: MAE's code names the first half "h", but `np.meshgrid(grid_w, grid_h)`
  puts the column there, and the released MAE, DiT and Stable Diffusion 3 weights rely on it.
- `apply_rope_2d` gives each axis its own ladder θᵢ = base^(-2i/(dim/2)). "interleaved": the
  first dim/2 coordinates turn with the row, the rest with the column, in neighbouring pairs
  (EVA-02; FLUX.1's row and column axes). "half": pairs (xⱼ, x_{j+dim/2}), the first dim/4 of
  them by the row (Qwen2-VL's vision encoder).
- `apply_mrope` is Qwen2-VL's M-RoPE: one ladder θᵢ = base^(-2i/dim) over the whole head, pairs
  split into sections (16, 24, 24 in Qwen2-VL) that follow t, h and w, half layout.

Everything here is plain torch: no figures, no widgets.
"""

from __future__ import annotations

import operator

import numpy as np
import torch

from .absolute import sinusoidal_frequencies, sinusoidal_table
from .rope import ROPE_LAYOUTS, apply_rope

__all__ = ["patch_grid", "patchify", "sinusoidal_table_2d", "apply_rope_2d",
           "mrope_position_ids", "apply_mrope", "interpolate_table_2d", "scaled_patch_grid",
           "QWEN2_VL_MROPE_SECTION"]

# Qwen2-VL's split of the 64 pairs of a 128-wide head: 16 follow time, 24 height, 24 width.
QWEN2_VL_MROPE_SECTION = (16, 24, 24)


# --- Patches ----------------------------------------------------------------------------------


def patch_grid(height: int, width: int) -> torch.Tensor:
    """The (row, column) of every patch of a `height` x `width` grid, in raster order.

    Returns a `[height * width, 2]` integer tensor: row k is the patch at sequence index k, so
    index = row · width + column. Column 0 of the result is the row, column 1 the column.
    """
    _check_positive("height", height, "a grid needs at least one row of patches")
    _check_positive("width", width, "a grid needs at least one column of patches")
    rows = torch.arange(height).repeat_interleave(width)  # 0 0 0 ... 1 1 1 ...
    columns = torch.arange(width).repeat(height)  # 0 1 2 ... 0 1 2 ...
    return torch.stack([rows, columns], dim=-1)


def patchify(image, patch_size: int) -> torch.Tensor:
    """Cut an image into square patches, each flattened into one vector, as ViT does.

    image       `[H, W, C]` (channels last, as `matplotlib.image.imread` gives) or `[H, W]`;
                a tensor or a numpy array. H and W must be multiples of `patch_size`.
    patch_size  the side of a patch, in pixels (16 in ViT-B/16, 14 in Qwen2-VL)

    Returns `[(H / p) · (W / p), p · p · C]`: patches in raster order (as `patch_grid`), the
    pixels of each patch row by row, channels last. Same dtype as the image.
    """
    # A copy of an array: matplotlib's images are read-only, which torch warns about.
    pixels = image if isinstance(image, torch.Tensor) else torch.from_numpy(np.array(image))
    if pixels.dim() == 2:
        pixels = pixels[..., None]
    if pixels.dim() != 3:
        raise ValueError(f"image must have shape [H, W, C] or [H, W], got {list(pixels.shape)}")
    _check_positive("patch_size", patch_size, "a patch is at least one pixel wide")
    height, width, channels = pixels.shape
    for name, size in (("high", height), ("wide", width)):
        if size == 0 or size % patch_size:
            raise ValueError(
                f"the image is {size} pixels {name}, not a positive multiple of "
                f"patch_size={patch_size}: crop or resize it first (ViT-B/16 resizes to "
                f"224 x 224, which 16-pixel patches tile exactly)")
    rows, columns = height // patch_size, width // patch_size
    blocks = pixels.reshape(rows, patch_size, columns, patch_size, channels)
    # [rows, columns, p, p, C]: patch (r, c) holds pixels r·p .. r·p + p - 1, c·p .. c·p + p - 1
    return blocks.permute(0, 2, 1, 3, 4).reshape(rows * columns, -1)


# --- The 2-D sinusoidal table (MAE) -----------------------------------------------------------


def sinusoidal_table_2d(height: int, width: int, dim: int,
                        base: float = 10000.0) -> torch.Tensor:
    """MAE's fixed 2-D sin-cos table for a `height` x `width` grid: `[height · width, dim]`.

    Row k is the vector of the patch at raster index k, (row, column) = `patch_grid(...)[k]`:
    its first dim/2 entries are the 1-D sinusoidal table of size dim/2 (half layout: sines,
    then cosines) at the patch's column, the last dim/2 entries the same table at its row:

        [sin(col·ωᵢ) | cos(col·ωᵢ) | sin(row·ωᵢ) | cos(row·ωᵢ)],   ωᵢ = base^(-2i/(dim/2))

    That is the layout of MAE's `get_2d_sincos_pos_embed` (column first; see the module's
    docstring), also used by DiT and Stable Diffusion 3. dim must be a multiple of 4: two
    halves, each made of sin/cos pairs. Float32, like `sinusoidal_table`.
    """
    _check_multiple_of_four("dim", dim, "half of it encodes the column and half the row, "
                                        "each half as sin/cos pairs")
    grid = patch_grid(height, width)
    by_column = sinusoidal_table(width, dim // 2, base, layout="half")
    by_row = sinusoidal_table(height, dim // 2, base, layout="half")
    return torch.cat([by_column[grid[:, 1]], by_row[grid[:, 0]]], dim=-1)


# --- Axial 2-D RoPE ---------------------------------------------------------------------------


def apply_rope_2d(x: torch.Tensor, positions, base: float = 10000.0,
                  layout: str = "interleaved") -> torch.Tensor:
    """Axial 2-D RoPE: turn half of each query or key by its row, the other half by its column.

    x          `[..., T, dim]` queries or keys, dim a multiple of 4 (two halves of pairs)
    positions  `[T, 2]` (row, column) of each of the T tokens, e.g. `patch_grid(h, w)`;
               integers or fractions
    base       each half uses the ladder θᵢ = base^(-2i/(dim/2)), i = 0 .. dim/4 - 1: a 1-D
               RoPE of size dim/2 per axis (EVA-02, FLUX.1 and Qwen2-VL's vision encoder all
               restart the ladder for each axis)
    layout     "interleaved": coordinates 0 .. dim/2 - 1 turn with the row and the rest with
               the column, in neighbouring pairs (x₀, x₁), ... (EVA-02, FLUX.1).
               "half": the pairs are (xⱼ, x_{j+dim/2}); pairs j < dim/4 turn with the row,
               the others with the column (Qwen2-VL's vision encoder, with `rotate_half`).

    A query at (r, c) and a key at (r', c') then score q·k through (r' - r, c' - c) alone.
    Returns a tensor of x's shape and dtype.
    """
    dim = _check_rotated("x", x, multiple=4, why="half of each head turns with the row and half "
                                                  "with the column, in pairs")
    if layout not in ROPE_LAYOUTS:
        raise ValueError(f"layout must be one of {ROPE_LAYOUTS}, got {layout!r}")
    grid = _check_positions_2d(positions, x.shape[-2])
    half, quarter = dim // 2, dim // 4
    if layout == "interleaved":
        by_row, by_column = torch.arange(half), torch.arange(half, dim)
    else:  # pair j is (xⱼ, x_{j+dim/2}): keep both members of a pair on the same axis
        by_row = torch.cat([torch.arange(quarter), torch.arange(half, half + quarter)])
        by_column = torch.cat([torch.arange(quarter, half), torch.arange(half + quarter, dim)])
    return _rotate_parts(x, [(by_row, grid[:, 0], None), (by_column, grid[:, 1], None)],
                         base, layout)


# --- M-RoPE (Qwen2-VL) ------------------------------------------------------------------------


def mrope_position_ids(segments, spatial_merge_size: int = 2) -> torch.Tensor:
    """Qwen2-VL's three position ids (time, height, width) for a sequence of text and images.

    segments            in order: an int n for a run of n text tokens, or a (t, h, w) grid for
                        an image or video, in vision-encoder patches, as Qwen2-VL's
                        `image_grid_thw` gives it (an image is t = 1; for a video t counts
                        time steps, each a pair of frames, `temporal_patch_size = 2`)
    spatial_merge_size  the encoder merges this many x this many neighbouring patches into one
                        token (2 in Qwen2-VL), so an image gives t · (h/m) · (w/m) tokens; h and
                        w must be multiples of it

    Numbering (the Qwen2-VL paper, and `get_rope_index` in Hugging Face's Qwen2-VL code):
    - text tokens get the same id in all three components, counting on by one per token;
    - an image's tokens, with s the next free id: t = s + time step, h = s + row,
      w = s + column (merged rows and columns, time steps then rows then columns in sequence
      order);
    - whatever follows starts at the largest id used so far, plus one. An image of h x w
      tokens advances the position by max(h, w), not by h · w.

    Returns a `[3, L]` integer tensor (rows t, h, w) for the L tokens of the sequence.
    """
    merge = _check_positive("spatial_merge_size", spatial_merge_size,
                            "it merges m x m patches into one token")
    segments = _check_segments(segments)
    parts, start = [], 0
    for index, segment in enumerate(segments):
        if isinstance(segment, int):  # a run of text tokens
            ids = torch.arange(start, start + segment).expand(3, -1)
        else:
            frames, height, width = segment
            for name, size in (("height", height), ("width", width)):
                if size % merge:
                    raise ValueError(
                        f"segment {index}: the grid's {name} {name[0]}={size} is not a multiple "
                        f"of spatial_merge_size={merge} (Qwen2-VL merges {merge} x {merge} "
                        f"neighbouring patches into one token)")
            t, h, w = torch.meshgrid(torch.arange(frames), torch.arange(height // merge),
                                     torch.arange(width // merge), indexing="ij")
            ids = torch.stack([t.flatten(), h.flatten(), w.flatten()]) + start
        parts.append(ids)
        start = int(ids.max()) + 1  # the next segment starts past every id used so far
    return torch.cat(parts, dim=1)


def apply_mrope(x: torch.Tensor, position_ids, mrope_section=QWEN2_VL_MROPE_SECTION,
                base: float = 10000.0) -> torch.Tensor:
    """M-RoPE (Qwen2-VL): RoPE whose pairs follow three position ids, time, height and width.

    x              `[..., T, dim]` queries or keys (half layout, as Hugging Face's Qwen2-VL)
    position_ids   `[3, T]` (t, h, w) of each token, e.g. from `mrope_position_ids`
    mrope_section  how many of the dim/2 pairs follow t, h and w, in that order; must add up to
                   dim/2. Qwen2-VL: (16, 24, 24) for its 128-wide heads
    base           one ladder θᵢ = base^(-2i/dim) over all pairs, as in 1-D RoPE: the time
                   section gets the fastest pairs, the width section the slowest (Qwen2-VL
                   uses base 1,000,000)

    Pair i = (xᵢ, x_{i+dim/2}) turns by (id of its section) · θᵢ. For a text token, whose three
    ids are equal, this is exactly `apply_rope(x, positions, base, layout="half")`.
    Returns a tensor of x's shape and dtype.
    """
    dim = _check_rotated("x", x, multiple=2, why="coordinates rotate in pairs")
    sections = _check_sections(mrope_section, dim)
    ids = _check_position_ids(position_ids, x.shape[-2])
    thetas = sinusoidal_frequencies(dim, base)  # the same ladder as RoPE's, in float64
    half, parts, first = dim // 2, [], 0
    for axis, size in enumerate(sections):
        pairs = torch.arange(first, first + size)
        parts.append((torch.cat([pairs, pairs + half]), ids[axis], thetas[first:first + size]))
        first += size
    return _rotate_parts(x, [part for part in parts if len(part[2])], base, "half")


# --- Shared pieces ----------------------------------------------------------------------------


# --- A new grid: resizing a table, rescaling positions ----------------------------------------


def interpolate_table_2d(table: torch.Tensor, height: int, width: int, new_height: int,
                         new_width: int) -> torch.Tensor:
    """A table of one position vector per patch, resized from one grid to another (MAE).

    table       `[height * width, dim]`: the vectors of a height x width grid in raster order
                (only the patches: MAE keeps its [CLS] row aside and puts it back unchanged)
    new_height, new_width  the grid to resize to

    As `interpolate_pos_embed` in MAE's `util/pos_embed.py`: the rows are laid out as a
    dim-channel image of height x width pixels, resized with bicubic interpolation
    (`align_corners=False`) and read back in raster order. Returns
    `[new_height * new_width, dim]`, of the table's dtype (half precision is interpolated in
    float32, as EVA-02's copy of the function does).
    """
    _check_positive("height", height, "the trained grid needs at least one row")
    _check_positive("width", width, "the trained grid needs at least one column")
    _check_positive("new_height", new_height, "the new grid needs at least one row")
    _check_positive("new_width", new_width, "the new grid needs at least one column")
    if not isinstance(table, torch.Tensor) or not table.is_floating_point() or table.dim() != 2:
        found = (f"{table.dtype} tensor of shape {list(table.shape)}"
                 if isinstance(table, torch.Tensor) else type(table).__name__)
        raise ValueError(f"table must be a real floating-point tensor of shape [patches, dim], "
                         f"got a {found}")
    if table.shape[0] != height * width:
        raise ValueError(f"table must have one row per patch of the {height} x {width} grid, "
                         f"{height * width} rows, got {table.shape[0]}")
    dim = table.shape[1]
    work = table if table.dtype in (torch.float32, torch.float64) else table.float()
    image = work.reshape(1, height, width, dim).permute(0, 3, 1, 2)  # [1, dim, height, width]
    resized = torch.nn.functional.interpolate(image, size=(new_height, new_width),
                                              mode="bicubic", align_corners=False)
    return resized.permute(0, 2, 3, 1).reshape(new_height * new_width, dim).to(table.dtype)


def scaled_patch_grid(height: int, width: int, trained_height: int,
                      trained_width: int) -> torch.Tensor:
    """EVA-02's (row, column) RoPE positions for a height x width grid, when its RoPE was
    pretrained on a trained_height x trained_width grid.

    Each axis is `t = arange(n) / n · n_trained` (`VisionRotaryEmbeddingFast` in EVA-02's
    `rope.py`, with ft_seq_len = n and pt_seq_len = n_trained): a grid of any size gets
    positions from 0 up to below n_trained, the range seen in pretraining, n_trained / n apart.
    On the trained grid itself they are 0, 1, 2, ... as in `patch_grid`.
    Returns `[height * width, 2]` float64, in raster order.
    """
    _check_positive("height", height, "a grid needs at least one row of patches")
    _check_positive("width", width, "a grid needs at least one column of patches")
    _check_positive("trained_height", trained_height, "the pretraining grid's rows")
    _check_positive("trained_width", trained_width, "the pretraining grid's columns")
    rows = torch.arange(height, dtype=torch.float64) / height * trained_height
    columns = torch.arange(width, dtype=torch.float64) / width * trained_width
    return torch.stack([rows.repeat_interleave(width), columns.repeat(height)], dim=-1)


def _rotate_parts(x: torch.Tensor, parts, base: float, layout: str) -> torch.Tensor:
    """Rotate each group of coordinates of x with 1-D RoPE by its own positions.

    parts: (coordinates, positions, inv_freq or None). The coordinates of a group, taken in
    order, form a vector of the given layout: apply_rope turns its pairs, and the result goes
    back to the same places.
    """
    rotated = torch.empty_like(x)
    for coordinates, positions, inv_freq in parts:
        rotated[..., coordinates] = apply_rope(x[..., coordinates], positions, base, layout,
                                               inv_freq=inv_freq)
    return rotated


def _as_int(value):
    if isinstance(value, bool):
        return None
    try:
        return operator.index(value)  # int, numpy integer, 0-d integer tensor
    except TypeError:
        return None


def _check_positive(name: str, value, why: str) -> int:
    number = _as_int(value)
    if number is None or number <= 0:
        raise ValueError(f"{name} must be a positive integer ({why}), got {name}={value!r}")
    return number


def _check_multiple_of_four(name: str, value, why: str) -> int:
    number = _as_int(value)
    if number is None or number <= 0 or number % 4:
        raise ValueError(f"{name} must be a positive multiple of 4 ({why}), got {name}={value!r}")
    return number


def _check_rotated(name: str, x, multiple: int, why: str) -> int:
    if not isinstance(x, torch.Tensor) or not x.is_floating_point() or x.dim() < 2:
        found = (f"{x.dtype} tensor of shape {list(x.shape)}" if isinstance(x, torch.Tensor)
                 else type(x).__name__)
        raise ValueError(f"{name} must be a real floating-point tensor of shape [..., T, dim], "
                         f"got a {found}")
    dim = x.shape[-1]
    if dim == 0 or dim % multiple:
        raise ValueError(f"the last dimension of {name} must be a positive multiple of "
                         f"{multiple} ({why}), got {dim}")
    return dim


def _check_positions_2d(positions, length: int) -> torch.Tensor:
    grid = torch.as_tensor(positions)
    if grid.dtype == torch.bool or grid.is_complex():
        raise ValueError(f"positions must be integers or real numbers, got {grid.dtype}")
    if grid.shape != (length, 2):
        raise ValueError(f"positions must have shape [T, 2] = [{length}, 2] (a row and a column "
                         f"for each of the T tokens of x), got {list(grid.shape)}")
    return grid


def _check_position_ids(position_ids, length: int) -> torch.Tensor:
    ids = torch.as_tensor(position_ids)
    if ids.dtype == torch.bool or ids.is_complex():
        raise ValueError(f"position_ids must be integers or real numbers, got {ids.dtype}")
    if ids.shape != (3, length):
        raise ValueError(f"position_ids must have shape [3, T] = [3, {length}] (t, h and w for "
                         f"each of the T tokens of x), got {list(ids.shape)}")
    return ids


def _check_sections(mrope_section, dim: int) -> list[int]:
    try:
        sections = [_as_int(size) for size in mrope_section]
    except TypeError:
        sections = [None]
    if len(sections) != 3 or any(size is None or size < 0 for size in sections):
        raise ValueError(f"mrope_section must be three non-negative integers (pairs for t, h "
                         f"and w), got {mrope_section!r}")
    if sum(sections) != dim // 2:
        raise ValueError(f"mrope_section must add up to dim/2 = {dim // 2} (every pair of the "
                         f"{dim}-wide head follows one of t, h, w), got {list(sections)} "
                         f"(sum {sum(sections)})")
    return sections


def _check_segments(segments) -> list:
    if isinstance(segments, (str, bytes)) or not hasattr(segments, "__iter__"):
        raise ValueError(f"segments must be a list of text lengths (int) and image grids "
                         f"(t, h, w), got {type(segments).__name__}")
    checked = []
    for index, segment in enumerate(segments):
        count = _as_int(segment)
        if count is not None:
            if count <= 0:
                raise ValueError(f"segment {index}: a text run must have at least one token, "
                                 f"got {segment!r}")
            checked.append(count)
            continue
        try:
            grid = [_as_int(size) for size in segment]
        except TypeError:
            grid = []
        if len(grid) != 3 or any(size is None for size in grid):
            raise ValueError(f"segment {index}: expected a text length (int) or an image grid "
                             f"(t, h, w) of three integers, got {segment!r}")
        if min(grid) <= 0:
            raise ValueError(f"segment {index}: an image grid (t, h, w) needs at least one "
                             f"frame, row and column, got {tuple(grid)}")
        checked.append(tuple(grid))
    if not checked:
        raise ValueError("segments is empty: give at least one text run or image grid")
    return checked
