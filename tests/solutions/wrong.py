def run(x, w):
    return x * w + 1.01  # off by 0.01 everywhere
