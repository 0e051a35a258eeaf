"""A small model with several kinds of TorchDynamo graph breaks.

graphmend's bundled example: each marked line makes `torch.compile` split the
forward pass into several graphs.
"""

import logging
import warnings

import torch
from torch import nn

logger = logging.getLogger(__name__)


class TinyBlock(nn.Module):
    def __init__(self, width: int = 16) -> None:
        super().__init__()
        self.proj = nn.Linear(width, width)
        self.norm = nn.LayerNorm(width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.proj(x)
        # data-dependent branch: Dynamo cannot know which way it goes
        if h.abs().max() > 10.0:
            h = h / 10.0
        else:
            h = h * 1.0
        print("block output norm computed")  # a Python side effect
        return self.norm(h + x)


class TinyModel(nn.Module):
    def __init__(self, width: int = 16, depth: int = 2) -> None:
        super().__init__()
        self.blocks = nn.ModuleList(TinyBlock(width) for _ in range(depth))
        self.head = nn.Linear(width, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # a validation guard on tensor data
        if torch.isnan(x).any():
            raise ValueError("input contains NaN")
        logger.warning("running TinyModel on %d rows", x.shape[0])
        for block in self.blocks:
            x = block(x)
        if x.sum() < 0:
            warnings.warn("negative activations")
        return self.head(x)


def make_model():
    """Factory used by `graphmend explain examples/tiny_model.py:make_model`."""
    torch.manual_seed(0)
    model = TinyModel().eval()
    return model, (torch.randn(3, 16),)
