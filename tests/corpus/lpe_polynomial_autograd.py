# Follows the shape of: PyTorch tutorial "Learning PyTorch with Examples" — "PyTorch: Tensors and autograd" (third-order polynomial fitting sin(x)) — https://pytorch.org/tutorials/beginner/pytorch_with_examples.html (pytorch/tutorials: beginner_source/examples_autograd/polynomial_autograd.py)
# What it exercises: four scalar leaves a, b, c, d with requires_grad=True, y_pred = a + b*x + c*x**2 + d*x**3 in a training loop, loss.backward(), manual updates a -= lr * a.grad inside torch.no_grad(), and a.grad = None to reset.
# Adapted to run offline in a few seconds: 200 sample points instead of 2000, 300 iterations instead of 2000 (printing every 50 instead of every 100), learning rate 1e-5 instead of 1e-6 to suit the fewer points, fixed seed, CPU only.
import math

import torch

dtype = torch.float
device = torch.device("cpu")
torch.manual_seed(0)

# Inputs and target: sin on [-pi, pi].
x = torch.linspace(-math.pi, math.pi, 200, device=device, dtype=dtype)
y = torch.sin(x)

# One 0-d tensor per coefficient, all tracked by autograd.
a = torch.randn((), device=device, dtype=dtype, requires_grad=True)
b = torch.randn((), device=device, dtype=dtype, requires_grad=True)
c = torch.randn((), device=device, dtype=dtype, requires_grad=True)
d = torch.randn((), device=device, dtype=dtype, requires_grad=True)

learning_rate = 1e-5
for t in range(300):
    # Forward pass with plain tensor arithmetic.
    y_pred = a + b * x + c * x ** 2 + d * x ** 3

    # Sum of squared errors.
    loss = (y_pred - y).pow(2).sum()
    if t % 50 == 49:
        print(t, loss.item())

    # Gradients of loss with respect to a, b, c and d.
    loss.backward()

    # Gradient descent by hand, outside the graph.
    with torch.no_grad():
        a -= learning_rate * a.grad
        b -= learning_rate * b.grad
        c -= learning_rate * c.grad
        d -= learning_rate * d.grad

        # Drop the gradients so they do not add up across iterations.
        a.grad = None
        b.grad = None
        c.grad = None
        d.grad = None

print(f'Result: y = {a.item()} + {b.item()} x + {c.item()} x^2 + {d.item()} x^3')
