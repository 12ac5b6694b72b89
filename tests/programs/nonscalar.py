import torch

x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = x * 2
y.backward(gradient=torch.ones_like(y))
print(x.grad)
y = x * 3
y.backward()
