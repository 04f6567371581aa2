"""
Uses torch on the CPU
=====================

Allocates a tensor; without CUDA, its record has no GPU memory.
"""

import torch

tensor = torch.ones(1024, 1024)
print("cuda initialised:", torch.cuda.is_initialized(), tensor.sum().item())
