"""Import torchvision beside a CPU-only torch 2.13.0.

scripts/setup.sh installs torchvision 0.28.0 (the release for torch 2.13.0)
with ``--no-deps --target <venv>/lib/torchvision-0.28.0``, outside
site-packages: transformers imports torchvision whenever it can, and the
survey measures transformers as installed, without it.  PyPI's wheel is
built against the CUDA torch; scripts/torchvision_cpu_stubs.py builds stub
CUDA libraries into ``<that dir>/cpu-stubs`` so that its C++ ops (the CPU
kernels) load.

``import_torchvision()`` puts that directory on ``sys.path`` (or
$GRAPHMEND_TORCHVISION_DIR), loads the stubs (RTLD_GLOBAL) when torch has no
CUDA, imports torchvision and checks that its ops loaded.  A torchvision
already importable (a CPU build, say) is used as it is.
"""

from __future__ import annotations

import ctypes
import importlib.util
import os
import sys
from typing import Any

VERSION = "0.28.0"


def tv_dir() -> str:
    return os.environ.get("GRAPHMEND_TORCHVISION_DIR") or os.path.join(sys.prefix, "lib", f"torchvision-{VERSION}")


def stub_dir() -> str:
    return os.path.join(tv_dir(), "cpu-stubs")


def import_torchvision() -> Any:
    if "torchvision" not in sys.modules:
        import torch

        if importlib.util.find_spec("torchvision") is None and os.path.isdir(tv_dir()):
            sys.path.insert(0, tv_dir())
        d = stub_dir()
        if getattr(torch.version, "cuda", None) is None and os.path.isdir(d):
            for lib in ("libc10_cuda.so", "libtorch_cuda.so"):
                p = os.path.join(d, lib)
                if os.path.exists(p):
                    ctypes.CDLL(p, mode=ctypes.RTLD_GLOBAL)
    try:
        import torchvision
    except ImportError as e:
        raise RuntimeError(f"torchvision is not importable ({e}); scripts/setup.sh installs it into {tv_dir()}") from e
    from torchvision.extension import _has_ops

    if not _has_ops():
        raise RuntimeError(f"torchvision {torchvision.__version__} imported but its C++ ops did not load "
                           f"(no stubs in {stub_dir()}? run scripts/setup.sh)")
    return torchvision
