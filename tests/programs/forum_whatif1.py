import torch

x = torch.tensor(42., requires_grad=True)
x = x ** 2  # re-use the same variable
x3 = x ** 3
f = x + x3
x.retain_grad()
f.backward(retain_graph=False)
print(x.grad)
