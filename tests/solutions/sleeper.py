import time


def run(x, w):
    time.sleep(3600)  # hangs: must become TIMEOUT
