import torch

z = torch.randn(200, dtype=torch.complex64, generator=torch.Generator().manual_seed(0)).requires_grad_()
(z.abs() ** 2).sum().backward()
print(z.grad.shape)
base = torch.zeros(4, requires_grad=True).clone()
base[1:3].mul_(2)
print(base.grad_fn.name())
