import torch

x = torch.tensor([1.0, 2.0], requires_grad=True)
y = x ** 2
d = y.detach()
with torch.no_grad():
    n = y * 3
v = y.data
print(d.requires_grad, n.requires_grad, v.requires_grad)
(y.sum() + d.sum()).backward()
print(x.grad)
