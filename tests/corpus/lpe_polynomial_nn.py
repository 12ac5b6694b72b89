# Follows the shape of: PyTorch tutorial "Learning PyTorch with Examples" — "PyTorch: nn" — https://pytorch.org/tutorials/beginner/pytorch_with_examples.html (pytorch/tutorials: beginner_source/examples_nn/polynomial_nn.py)
# What it exercises: features xx = x.unsqueeze(-1).pow(p) built without grad, nn.Sequential(nn.Linear(3, 1), nn.Flatten(0, 1)), nn.MSELoss(reduction='sum'), model.zero_grad(), loss.backward(), a manual update `param -= learning_rate * param.grad` over model.parameters() inside torch.no_grad(), reading model[0].weight at the end.
# Adapted to run offline in a few seconds: 200 points instead of 2000, 300 iterations instead of 2000 (printing every 50), learning rate 1e-5 instead of 1e-6, fixed seed.
import math

import torch

torch.manual_seed(0)

# Input points and the function to fit.
x = torch.linspace(-math.pi, math.pi, 200)
y = torch.sin(x)

# Each row of xx holds (x, x^2, x^3): the polynomial becomes a linear layer.
p = torch.tensor([1, 2, 3])
xx = x.unsqueeze(-1).pow(p)

# Linear layer, then flatten the (200, 1) output to (200,) to match y.
model = torch.nn.Sequential(
    torch.nn.Linear(3, 1),
    torch.nn.Flatten(0, 1)
)

loss_fn = torch.nn.MSELoss(reduction='sum')

learning_rate = 1e-5
for t in range(300):
    # Forward pass: call the model like a function.
    y_pred = model(xx)

    # Compare with the targets.
    loss = loss_fn(y_pred, y)
    if t % 50 == 49:
        print(t, loss.item())

    # Clear old gradients, then compute new ones for every parameter.
    model.zero_grad()
    loss.backward()

    # Step each parameter against its gradient, without recording it.
    with torch.no_grad():
        for param in model.parameters():
            param -= learning_rate * param.grad

# The first layer holds the coefficients.
linear_layer = model[0]

print(f'Result: y = {linear_layer.bias.item()} + {linear_layer.weight[:, 0].item()} x + {linear_layer.weight[:, 1].item()} x^2 + {linear_layer.weight[:, 2].item()} x^3')
