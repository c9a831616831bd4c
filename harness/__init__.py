"""opbench harness: manifest -> validated model -> build solution -> run workload -> check -> time -> trace -> report."""

__version__ = "0.1.0"
