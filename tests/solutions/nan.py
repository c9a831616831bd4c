def run(x, w):
    y = x * w + 1.0
    y[::97] = float("nan")
    return y
