# Follows the shape of: PyTorch "Learn the Basics" — "Automatic Differentiation with torch.autograd" — https://pytorch.org/tutorials/beginner/basics/autogradqs_tutorial.html (pytorch/tutorials: beginner_source/basics/autogradqs_tutorial.py)
# What it exercises: a one-layer network z = x @ w + b with binary_cross_entropy_with_logits, printing grad_fn of z and loss, loss.backward() then w.grad/b.grad, torch.no_grad() and detach() turning tracking off, and the "optional reading" Jacobian product: backward(torch.ones_like(out), retain_graph=True) called twice (gradients accumulate) and again after inp.grad.zero_().
# Adapted to run offline in a few seconds: other sizes (6 inputs, 4 outputs; a 3x4 eye instead of 4x5), fixed seed.
import torch

torch.manual_seed(0)

x = torch.ones(6)  # input tensor
y = torch.zeros(4)  # expected output
w = torch.randn(6, 4, requires_grad=True)
b = torch.randn(4, requires_grad=True)
z = torch.matmul(x, w) + b
loss = torch.nn.functional.binary_cross_entropy_with_logits(z, y)

print(f"Gradient function for z = {z.grad_fn}")
print(f"Gradient function for loss = {loss.grad_fn}")

# Computing gradients
loss.backward()
print(w.grad)
print(b.grad)

# Disabling gradient tracking
z = torch.matmul(x, w) + b
print(z.requires_grad)

with torch.no_grad():
    z = torch.matmul(x, w) + b
print(z.requires_grad)

z = torch.matmul(x, w) + b
z_det = z.detach()
print(z_det.requires_grad)

# Optional reading: tensor gradients and Jacobian products
inp = torch.eye(3, 4, requires_grad=True)
out = (inp + 2).pow(2).t()
out.backward(torch.ones_like(out), retain_graph=True)
print(f"First call\n{inp.grad}")
out.backward(torch.ones_like(out), retain_graph=True)
print(f"\nSecond call\n{inp.grad}")
inp.grad.zero_()
out.backward(torch.ones_like(out), retain_graph=True)
print(f"\nCall after zeroing gradients\n{inp.grad}")
