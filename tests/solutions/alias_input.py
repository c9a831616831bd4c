def run(x, w):
    x.mul_(w).add_(1.0)  # computes in place and hands the input back as the output
    return x
