def run(x, w):
    raise ValueError("deliberate failure inside the solution")
