# Follows the shape of: PyTorch tutorial "Learning PyTorch with Examples" — "PyTorch: Defining new autograd functions" (Legendre polynomial P3) — https://pytorch.org/tutorials/beginner/pytorch_with_examples.html (pytorch/tutorials: beginner_source/examples_autograd/polynomial_custom_function.py)
# What it exercises: a torch.autograd.Function subclass with static forward/backward, ctx.save_for_backward and ctx.saved_tensors, calling it through P3 = LegendrePolynomial3.apply inside the model y = a + b * P3(c + d * x), manual updates in torch.no_grad() and a.grad = None.
# Adapted to run offline in a few seconds: 200 points instead of 2000, 300 iterations instead of 2000 (printing every 50), learning rate 5e-5 instead of 5e-6, fixed seed, CPU only.
import math

import torch


class LegendrePolynomial3(torch.autograd.Function):
    """P3(t) = (5 t^3 - 3 t) / 2, with its derivative written by hand."""

    @staticmethod
    def forward(ctx, input):
        # Keep the input: the derivative needs it.
        ctx.save_for_backward(input)
        return 0.5 * (5 * input ** 3 - 3 * input)

    @staticmethod
    def backward(ctx, grad_output):
        # dP3/dt = 1.5 (5 t^2 - 1), chained with the incoming gradient.
        input, = ctx.saved_tensors
        return grad_output * 1.5 * (5 * input ** 2 - 1)


dtype = torch.float
device = torch.device("cpu")
torch.manual_seed(0)

x = torch.linspace(-math.pi, math.pi, 200, device=device, dtype=dtype)
y = torch.sin(x)

# Start near the answer so a few hundred steps are enough.
a = torch.full((), 0.0, device=device, dtype=dtype, requires_grad=True)
b = torch.full((), -1.0, device=device, dtype=dtype, requires_grad=True)
c = torch.full((), 0.0, device=device, dtype=dtype, requires_grad=True)
d = torch.full((), 0.3, device=device, dtype=dtype, requires_grad=True)

learning_rate = 5e-5
for t in range(300):
    # The custom function is used through its apply method.
    P3 = LegendrePolynomial3.apply

    y_pred = a + b * P3(c + d * x)

    loss = (y_pred - y).pow(2).sum()
    if t % 50 == 49:
        print(t, loss.item())

    loss.backward()

    with torch.no_grad():
        a -= learning_rate * a.grad
        b -= learning_rate * b.grad
        c -= learning_rate * c.grad
        d -= learning_rate * d.grad

        a.grad = None
        b.grad = None
        c.grad = None
        d.grad = None

print(f'Result: y = {a.item()} + {b.item()} * P3({c.item()} + {d.item()} x)')
