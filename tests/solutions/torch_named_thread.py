"""Hidden work on a thread whose target claims to be torch's (`__module__ = "torch.x"`), which a check
exempting threads by their target's module let through."""
import threading
import time

import torch


def run(x, w):
    y = torch.empty_like(x)

    def fill():
        time.sleep(0.2)
        torch.mul(x, w, out=y).add_(1.0)
    fill.__module__ = "torch.utils.data"
    threading.Thread(target=fill, daemon=True, name="pin_memory").start()
    return y
