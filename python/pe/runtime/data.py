"""Random training data shaped like the factory's example input: the same on every process
for a given seed and iteration, so stages, replicas and the single-process reference all
see the same samples."""

import torch


def random_like_batch(example: torch.Tensor, n: int, generator: torch.Generator) -> torch.Tensor:
    """`n` samples shaped like one sample of `example`: normal floats, or integers in
    [0, max(example)] for integer inputs (token ids, class labels)."""
    shape = (n, *example.shape[1:])
    if example.is_floating_point():
        return torch.randn(shape, generator=generator, dtype=example.dtype)
    high = int(example.max().item()) + 1 if example.numel() else 1
    return torch.randint(0, max(high, 1), shape, generator=generator, dtype=example.dtype)


def iteration_batch(example: torch.Tensor, output: torch.Tensor, gbs: int, seed: int,
                    iteration: int):
    """(inputs, targets) of one iteration: `gbs` samples; targets are normal floats shaped
    like the model's output (`output` is its value for the example input)."""
    generator = torch.Generator().manual_seed(seed * 100003 + iteration)
    inputs = random_like_batch(example, gbs, generator)
    targets = torch.randn((gbs, *output.shape[1:]), generator=generator, dtype=output.dtype)
    return inputs, targets
