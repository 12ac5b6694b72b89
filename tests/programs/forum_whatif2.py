import torch

x = torch.tensor(42., requires_grad=True)
y = x ** 2
x = y ** 3  # re-use the same variable
f = y + x
x.retain_grad()
f.backward(retain_graph=False)
print(x.grad)
