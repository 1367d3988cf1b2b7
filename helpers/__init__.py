"""Positions: the course's helpers. Each module holds one concept and can be read alone.

    data       GPT-2's tokenizer (offline), the story, sliding-window batches
    attention  plain scaled dot-product self-attention (no positions)
    absolute   learned and sinusoidal position tables, the input embedding
    rope       rotary position embeddings
    rope_scaling  stretching RoPE past its trained length (PI, NTK-aware, YaRN, Llama 3)
    relative   Shaw's relative embeddings, T5 buckets, ALiBi
    positions_2d  image patches: 2-D sin-cos tables (MAE), axial 2-D RoPE, Qwen2-VL's M-RoPE
    model      TinyGPT, built from the modules above, and its training loop
    inference     position ids from a padding mask, left padding, packed documents
    evaluation    scoring a model on a long text: per position, sliding and non-overlapping windows
    retrieval     the passkey game: does a model still read a token far back?
    grid          one run per position scheme and seed, and the spread over seeds
    plots      pure figure functions (numbers in, Figure out), one module per notebook topic
    widgets    sliders wired to those figures
    exercises  the check_... functions the notebooks' exercises call
"""

from .data import (GPTDatasetV1, create_dataloader_v1, find_data_dir, gpt2_tokenizer,
                   load_the_verdict)
from .attention import *  # noqa: F401,F403
from .absolute import *  # noqa: F401,F403
from .rope import *  # noqa: F401,F403
from .rope_scaling import *  # noqa: F401,F403
from .relative import *  # noqa: F401,F403
from .positions_2d import *  # noqa: F401,F403
from .model import *  # noqa: F401,F403
