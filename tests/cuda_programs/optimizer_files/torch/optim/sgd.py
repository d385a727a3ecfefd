"""An optimizer as the report knows one: a step method in a file under torch/optim/ (loaded
by py_call_sites.py from its path, never imported as torch: the real one stays reachable)."""


class SGD:
    def __init__(self, kernels):
        self.kernels = kernels

    def step(self):
        with self.kernels.scope("SGD.step (optimizer)"):
            self.kernels.launch("sgd_update", 120_000)
