# Follows the shape of: PyTorch tutorial "Learning PyTorch with Examples" — "PyTorch: Control Flow + Weight Sharing" (DynamicNet) — https://pytorch.org/tutorials/beginner/pytorch_with_examples.html (pytorch/tutorials: beginner_source/examples_nn/dynamic_net.py)
# What it exercises: an nn.Module with five scalar nn.Parameters whose forward picks a random number (random.randint) of extra terms and reuses the same parameter e in each of them (dynamic graph, weight sharing), nn.MSELoss(reduction='sum'), SGD with momentum, optimizer.zero_grad()/loss.backward()/optimizer.step().
# Adapted to run offline in a few seconds: 500 points instead of 2000, 200 iterations instead of 30000 (printing every 40), learning rate 4e-8 instead of 1e-8 to suit the smaller data, random.seed and torch.manual_seed fixed.
import math
import random

import torch


class DynamicNet(torch.nn.Module):
    def __init__(self):
        """Five scalar parameters: four for the cubic, one shared by the extra terms."""
        super().__init__()
        self.a = torch.nn.Parameter(torch.randn(()))
        self.b = torch.nn.Parameter(torch.randn(()))
        self.c = torch.nn.Parameter(torch.randn(()))
        self.d = torch.nn.Parameter(torch.randn(()))
        self.e = torch.nn.Parameter(torch.randn(()))

    def forward(self, x):
        """
        A cubic, plus between zero and two higher-order terms chosen at random on
        every call. All of them use self.e, so that parameter is shared: the graph
        is rebuilt on each forward and may have a different shape each time.
        """
        y = self.a + self.b * x + self.c * x ** 2 + self.d * x ** 3
        for exp in range(4, random.randint(4, 6)):
            y = y + self.e * x ** exp
        return y

    def string(self):
        """Describe the learned polynomial like a plain Python function would."""
        return f'y = {self.a.item()} + {self.b.item()} x + {self.c.item()} x^2 + {self.d.item()} x^3 + {self.e.item()} x^4 ? + {self.e.item()} x^5 ?'


random.seed(0)
torch.manual_seed(0)

x = torch.linspace(-math.pi, math.pi, 500)
y = torch.sin(x)

model = DynamicNet()

# Plain SGD struggles here, so momentum is used.
criterion = torch.nn.MSELoss(reduction='sum')
optimizer = torch.optim.SGD(model.parameters(), lr=4e-8, momentum=0.9)
for t in range(200):
    y_pred = model(x)

    loss = criterion(y_pred, y)
    if t % 40 == 39:
        print(t, loss.item())

    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

print(f'Result: {model.string()}')
