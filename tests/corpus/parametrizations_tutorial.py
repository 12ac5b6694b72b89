# Follows the shape of: PyTorch tutorial "Parametrizations Tutorial" — https://pytorch.org/tutorials/intermediate/parametrizations.html (pytorch/tutorials: intermediate_source/parametrizations.py)
# What it exercises: torch.nn.utils.parametrize.register_parametrization with small nn.Modules (Symmetric via triu + transposed triu, Skew, CayleyMap with a registered identity buffer and torch.linalg.solve, MatrixExponential with torch.matrix_exp), chaining two parametrizations on one weight, layer.parametrizations.weight.original (the real leaf that gets .grad), gradients flowing through the parametrization in an SGD loop, parametrize.cached(), right_inverse and assigning layer.weight = X, and remove_parametrizations with leave_parametrized True/False.
# Adapted to run offline in a few seconds: 3x3 and 4x4 layers; the tutorial's "hand-rolled" first section and its Conv2d example are left out; a 5-step training loop on random data is added to make the gradient path visible; fixed seed.
import torch
import torch.nn as nn
import torch.nn.utils.parametrize as parametrize

torch.manual_seed(0)


class Symmetric(nn.Module):
    def forward(self, X):
        return X.triu() + X.triu(1).transpose(-1, -2)

    def right_inverse(self, A):
        # any X with forward(X) == A will do; the upper triangle works
        return A.triu()


layer = nn.Linear(3, 3)
parametrize.register_parametrization(layer, "weight", Symmetric())

A = layer.weight
assert torch.allclose(A, A.T)
print(A)
print(layer)
print("the unconstrained leaf:", layer.parametrizations.weight.original.shape,
      "is leaf", layer.parametrizations.weight.original.is_leaf)


class Skew(nn.Module):
    def forward(self, X):
        A = X.triu(1)
        return A - A.transpose(-1, -2)


class CayleyMap(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.register_buffer("Id", torch.eye(n))

    def forward(self, X):
        # (I + X)(I - X)^{-1}, written as a solve
        return torch.linalg.solve(self.Id - X, self.Id + X)


class MatrixExponential(nn.Module):
    def forward(self, X):
        return torch.matrix_exp(X)


# Skew-symmetric, then mapped to an orthogonal matrix: two parametrizations chained.
layer_orthogonal = nn.Linear(3, 3)
parametrize.register_parametrization(layer_orthogonal, "weight", Skew())
parametrize.register_parametrization(layer_orthogonal, "weight", CayleyMap(3))
X = layer_orthogonal.weight
print("Cayley: orthogonal", torch.dist(X.T @ X, torch.eye(3)).item() < 1e-5)

layer_exp = nn.Linear(3, 3)
parametrize.register_parametrization(layer_exp, "weight", Skew())
parametrize.register_parametrization(layer_exp, "weight", MatrixExponential())
X = layer_exp.weight
print("matrix_exp: orthogonal", torch.dist(X.T @ X, torch.eye(3)).item() < 1e-5)
print(layer_exp.parametrizations.weight)

# Training goes through the parametrization: the optimizer updates `original`,
# and the weight stays orthogonal.
optimizer = torch.optim.SGD(layer_orthogonal.parameters(), lr=0.1)
data = torch.randn(16, 3)
target = torch.randn(16, 3)
for step in range(5):
    optimizer.zero_grad()
    loss = ((layer_orthogonal(data) - target) ** 2).mean()
    loss.backward()
    optimizer.step()
    W = layer_orthogonal.weight
    print(f"step {step}: loss {loss.item():.4f}, still orthogonal {torch.dist(W.T @ W, torch.eye(3)).item() < 1e-4}")
print("grad on original:", layer_orthogonal.parametrizations.weight.original.grad is not None)

# Caching: inside the context the weight is computed once and reused.
with parametrize.cached():
    foo = layer_orthogonal.weight
    bar = layer_orthogonal.weight
print("same tensor while cached:", foo is bar)

# right_inverse makes assignment possible.
layer_sym = nn.Linear(4, 4)
parametrize.register_parametrization(layer_sym, "weight", Symmetric())
X = torch.rand(4, 4)
X = X + X.T
layer_sym.weight = X
print("assigned weight kept:", torch.allclose(layer_sym.weight, X))

# Removing: keep the current value, or go back to the unconstrained tensor.
layer = nn.Linear(3, 3)
parametrize.register_parametrization(layer, "weight", Skew())
print("before removal:", layer)
parametrize.remove_parametrizations(layer, "weight")
print("after removal (leave_parametrized=True):", layer)
print("weight is still skew:", torch.allclose(layer.weight, -layer.weight.T))

layer = nn.Linear(3, 3)
parametrize.register_parametrization(layer, "weight", Skew())
parametrize.remove_parametrizations(layer, "weight", leave_parametrized=False)
print("leave_parametrized=False, skew:", torch.allclose(layer.weight, -layer.weight.T))
