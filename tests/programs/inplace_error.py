import torch

x = torch.ones(3, requires_grad=True)
a = x.exp()
b = a * 2
a += 1
print("version", a._version)
b.sum().backward()
