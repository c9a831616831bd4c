import time


def run(x, w):
    print("sleeping", flush=True)  # in its worker's log: tests wait for this line, not for the log file
    time.sleep(3600)  # hangs: must become TIMEOUT
