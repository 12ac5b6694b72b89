import torch

x = torch.tensor([2.0], requires_grad=True)
y = x**2
# Retaining the graph
y.backward(retain_graph=True)  # No error here
print(x.grad)  # tensor([4.])
y.backward(retain_graph=True)
print(x.grad)  # accumulates: tensor([8.])
