import torch
from torch.utils._python_dispatch import TorchDispatchMode

class Log(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.ops = []
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops.append(str(func))
        return func(*args, **(kwargs or {}))

x = torch.ones(3, requires_grad=True)
with Log() as log:
    y = (x * 2).sum()
    y.backward()
    z = (x * 3).sum()
    z.backward()
print(len(log.ops), log.ops)
