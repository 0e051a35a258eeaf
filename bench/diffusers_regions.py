#!/usr/bin/env python3
"""Package regions on code graphmend was not written against: diffusers.

Builds seven small diffusers models from their constructors (random
weights, nothing downloaded), runs each forward eagerly under
sys.setprofile and records every diffusers function that ran, then asks the
package analysis (graphmend.lint.package_roots over every module of the
installed diffusers, include_own=True) which functions it makes regions.
Prints, per model, the functions that ran and those the analysis missed
(a miss is a site graphmend would never report or mend), and the number of
regions over the package.

diffusers is not a development dependency; install it apart, without its
dependencies, so that it cannot pull another torch:

    python -m pip install --no-deps --target /tmp/dfpkg diffusers==0.42.1 \
        requests idna urllib3 certifi charset-normalizer
    PYTHONPATH=/tmp/dfpkg .venv/bin/python bench/diffusers_regions.py
"""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def models(D, torch):  # noqa: N803 - D is the diffusers module
    g = torch.Generator().manual_seed(0)

    def randn(*shape):
        return torch.randn(*shape, generator=g)

    yield "UNet2DModel", D.UNet2DModel(
        sample_size=16, block_out_channels=(32, 64), layers_per_block=1, norm_num_groups=8,
        down_block_types=("DownBlock2D", "AttnDownBlock2D"),
        up_block_types=("AttnUpBlock2D", "UpBlock2D")), (randn(2, 3, 16, 16), torch.tensor([10, 20])), {}
    yield "AutoencoderKL", D.AutoencoderKL(
        block_out_channels=(32, 64), down_block_types=("DownEncoderBlock2D",) * 2,
        up_block_types=("UpDecoderBlock2D",) * 2, norm_num_groups=8), (randn(1, 3, 32, 32),), {}
    yield "UNet2DConditionModel", D.UNet2DConditionModel(
        sample_size=16, block_out_channels=(32, 64), layers_per_block=1, cross_attention_dim=32,
        down_block_types=("CrossAttnDownBlock2D", "DownBlock2D"),
        up_block_types=("UpBlock2D", "CrossAttnUpBlock2D"), norm_num_groups=8, attention_head_dim=8,
    ), (randn(2, 4, 16, 16), torch.tensor([5, 50]), randn(2, 7, 32)), {}
    yield "DiTTransformer2DModel", D.DiTTransformer2DModel(
        num_attention_heads=2, attention_head_dim=8, in_channels=4, num_layers=2, sample_size=8,
        patch_size=2, num_embeds_ada_norm=10, norm_num_groups=2,
    ), (randn(2, 4, 8, 8), torch.tensor([1, 3])), {"class_labels": torch.tensor([1, 2])}
    yield "SD3Transformer2DModel", D.SD3Transformer2DModel(
        sample_size=8, patch_size=2, in_channels=4, num_layers=2, attention_head_dim=8,
        num_attention_heads=2, joint_attention_dim=16, caption_projection_dim=16,
        pooled_projection_dim=16, out_channels=4, pos_embed_max_size=16,
    ), (randn(2, 4, 8, 8), randn(2, 5, 16), randn(2, 16), torch.tensor([1, 3])), {}
    yield "FluxTransformer2DModel", D.FluxTransformer2DModel(
        patch_size=1, in_channels=4, num_layers=1, num_single_layers=1, attention_head_dim=8,
        num_attention_heads=2, joint_attention_dim=16, pooled_projection_dim=16,
        axes_dims_rope=(2, 2, 4)), (), {
        "hidden_states": randn(1, 16, 4), "encoder_hidden_states": randn(1, 5, 16),
        "pooled_projections": randn(1, 16), "timestep": torch.tensor([1.0]),
        "img_ids": torch.zeros(16, 3), "txt_ids": torch.zeros(5, 3)}
    yield "LTXVideoTransformer3DModel", D.LTXVideoTransformer3DModel(
        in_channels=4, out_channels=4, num_attention_heads=2, attention_head_dim=8,
        cross_attention_dim=16, num_layers=1, caption_channels=16), (), {
        "hidden_states": randn(1, 8, 4), "encoder_hidden_states": randn(1, 3, 16),
        "timestep": torch.tensor([3]), "encoder_attention_mask": torch.ones(1, 3),
        "num_frames": 2, "height": 2, "width": 2}


def main() -> int:
    import diffusers
    import torch

    from graphmend import lint
    from region_recall import dotted, reached_functions

    root = os.path.dirname(diffusers.__file__)
    files = lint.read_sources(lint.python_files(root))
    reached = reached_functions(root, files)
    print(f"diffusers {diffusers.__version__}: {len(files)} modules, {len(reached)} functions reached")
    total_ran = total_missed = 0
    for name, model, args, kwargs in models(diffusers, torch):
        model.eval()
        seen: set[tuple[str, str]] = set()

        def profile(frame, event, arg, seen=seen):
            code = frame.f_code
            if event == "call" and code.co_filename.startswith(root) and "<" not in code.co_name:
                seen.add((os.path.relpath(code.co_filename, root), dotted(code.co_qualname)))

        with torch.no_grad():
            sys.setprofile(profile)
            try:
                model(*args, **kwargs)
            finally:
                sys.setprofile(None)
        missed = sorted(seen - reached)
        total_ran += len(seen)
        total_missed += len(missed)
        print(f"{name:28s} ran {len(seen):3d}  missed {len(missed)}  "
              + ", ".join(f"{p}:{q}" for p, q in missed))
    print(f"total: {total_ran} functions ran, {total_missed} missed; {len(reached)} regions")
    return 0


if __name__ == "__main__":
    sys.exit(main())
