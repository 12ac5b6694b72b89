import torch

x = torch.tensor(3.0, requires_grad=True)
y = x ** 3
dy, = torch.autograd.grad(y, x, create_graph=True)
d2y, = torch.autograd.grad(dy, x)
print(dy.item(), d2y.item())
