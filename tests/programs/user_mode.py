import torch
from torch.overrides import TorchFunctionMode


class Count(TorchFunctionMode):
    def __init__(self):
        super().__init__()
        self.names = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.names.append(getattr(func, "__name__", "?"))
        return func(*args, **(kwargs or {}))


x = torch.ones(3, requires_grad=True)
with Count() as counter:
    y = x * 2
    z = y.sum()
    z.backward()
print(counter.names)
