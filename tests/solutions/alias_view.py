def run(x, w):
    return x.view(-1)  # hands back (a view of) its input instead of a new tensor
