"""Caches its result by the inputs' addresses, as C++ solutions that keep device pointers do: the
harness reuses each input set's buffers while timing, so the cache hits. The inputs are redrawn in
place before every call, so the cached result is stale, and a re-checked timed sample shows it."""
_cache = {}


def run(x, w):
    key = (x.data_ptr(), w.data_ptr())
    if key not in _cache:
        _cache[key] = x * w + 1.0
    return _cache[key].clone()
