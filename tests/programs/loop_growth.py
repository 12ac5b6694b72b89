import torch

torch.manual_seed(1)
w = torch.randn(3, requires_grad=True)
total = 0
for step in range(5):
    loss = (w * step).pow(2).sum()
    total = total + loss
total.backward()
print(round(total.item(), 4), w.grad)
