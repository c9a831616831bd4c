import torch


class Sneaky(torch.Tensor):
    pass


def run(x, w):
    return (x * w + 1.0).as_subclass(Sneaky)
