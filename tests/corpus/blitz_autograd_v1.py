# Follows the shape of: PyTorch "Deep Learning with PyTorch: A 60 Minute Blitz" — "Autograd: Automatic Differentiation" (2018-2020 edition) — https://github.com/pytorch/tutorials (beginner_source/blitz/autograd_tutorial.py, before the "Gentle Introduction" rewrite)
# What it exercises: requires_grad=True leaves, printing grad_fn, requires_grad_() on a tensor built without grad, mean() then backward(), a vector-Jacobian product with y.backward(v) on a non-scalar grown in a while loop over y.data.norm(), torch.no_grad(), detach().
# Adapted to run offline in a few seconds: different constants and expressions than the tutorial (same steps), fixed seed; nothing else was needed.
import torch

torch.manual_seed(0)

# A 2x2 tensor whose operations will be recorded.
x = torch.full((2, 2), 2.0, requires_grad=True)
print(x)

# An operation on x: the result was produced by an op, so it has a grad_fn.
y = x - 1
print(y)
print(y.grad_fn)

# More operations, ending in a scalar.
z = 4 * y * y
out = z.sum() / 8
print(z, out)

# A tensor made without requires_grad can be switched on in place.
a = torch.randn(2, 2)
a = (a + 2) / (a * a + 1)
print(a.requires_grad)
a.requires_grad_(True)
print(a.requires_grad)
b = (a ** 2).mean()
print(b.grad_fn)

# Back-propagate from the scalar and look at d(out)/dx.
out.backward()
print(x.grad)

# Vector-Jacobian product: y is not a scalar, so backward needs a vector.
x = torch.randn(3, requires_grad=True)
y = x * 3
while y.data.norm() < 500:
    y = y * 3
print(y)

v = torch.tensor([1.0, 0.01, 0.5], dtype=torch.float)
y.backward(v)
print(x.grad)

# Stop tracking history.
print(x.requires_grad)
print((x * x).requires_grad)
with torch.no_grad():
    print((x * x).requires_grad)

# Or take a copy that shares the data but not the history.
print(x.requires_grad)
w = x.detach()
print(w.requires_grad)
print(x.eq(w).all())
