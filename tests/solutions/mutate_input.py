def run(x, w):
    y = x * w + 1.0
    x.zero_()  # scribbles over its input
    return y
