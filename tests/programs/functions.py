import torch


def square(t):
    out = t * t
    return out


def total_of(values):
    acc = values[0]
    for v in values[1:]:
        acc = acc + square(v)
    return acc


class Scale(torch.nn.Module):
    def __init__(self, k):
        super().__init__()
        self.k = torch.nn.Parameter(torch.tensor(k))

    def forward(self, t):
        return t * self.k


x = torch.tensor([1.0, 2.0], requires_grad=True)
s = Scale(3.0)
result = total_of([s(x), x, x]).sum()
result.backward()
print(x.grad, s.k.grad)
values = [square(torch.tensor(float(i))) for i in range(3)]
print(values)
