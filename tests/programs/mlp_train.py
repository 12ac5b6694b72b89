import sys

import torch
import torch.nn.functional as F

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
inputs = torch.randn(16, 4)
targets = torch.randn(16, 1)
for epoch in range(6):
    opt.zero_grad()
    loss = F.mse_loss(model(inputs), targets)
    loss.backward()
    opt.step()
    print(epoch, round(loss.item(), 4))
print("args:", sys.argv[1:])
