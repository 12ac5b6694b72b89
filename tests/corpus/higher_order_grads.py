# Follows the shape of: the torch.autograd "Functional higher level API" reference examples (jacobian/hessian/vjp/jvp/vhp/hvp, create_graph) — https://pytorch.org/docs/stable/autograd.html#functional-higher-level-api (pytorch/pytorch: torch/autograd/functional.py docstrings) — together with the higher-order derivative notebook pattern "torch.autograd.grad(..., create_graph=True) then .backward() on the gradient" as in https://github.com/fxnnxc/torch_autograd
# What it exercises: first, second, third derivatives of a scalar function with torch.autograd.grad(create_graph=True) and a final .backward(gradient=...) on the derivative, x.grad.zero_() between them; y.backward(create_graph=True) and then x.grad.backward(); a Hessian-vector product of a model's loss with respect to its parameters by double backward (grad, dot with v, grad again); torch.autograd.functional.jacobian (plain, create_graph=True, two inputs, vectorize=True), hessian (one and two inputs), vjp, jvp, vhp and hvp.
# Adapted to run offline in a few seconds: functions and sizes of our own (2x2 and 3-element inputs, a 3-4-1 MLP on 8 random samples); fixed seed.
import torch
import torch.nn as nn
from torch.autograd.functional import hessian, hvp, jacobian, jvp, vhp, vjp

torch.manual_seed(0)

# --- derivatives of a derivative -------------------------------------------------
v = 3.0
x = torch.tensor(v, requires_grad=True)

f = x ** 4 - 2 * x ** 2
print(f"x={v},         f = {f}")

# first order, keeping the graph for later
f.backward(retain_graph=True)
print(f"x={v},     df/dx = {x.grad}")

# second order: the gradient itself is differentiable with create_graph=True
x.grad.zero_()
df = torch.autograd.grad(f, x, create_graph=True)[0]
df.backward(gradient=torch.tensor(1.0))
print(f"x={v}, d2f/dx2 = {x.grad}")

# third order
x.grad.zero_()
df = torch.autograd.grad(f, x, create_graph=True)[0]
ddf = torch.autograd.grad(df, x, create_graph=True)[0]
ddf.backward(gradient=torch.tensor(1.0))
print(f"x={v}, d3f/dx3 = {x.grad}")

# the same with backward(create_graph=True): x.grad then has a grad_fn
x = torch.tensor(v, requires_grad=True)
y = x ** 4 - 2 * x ** 2
y.backward(create_graph=True)
first = x.grad
print("x.grad after create_graph backward:", first, "| requires grad:", first.requires_grad)
x.grad = None
first.backward()
print("second derivative via x.grad.backward():", x.grad)

# --- Hessian-vector product for a model, by double backward -----------------------------
model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
data = torch.randn(8, 3)
target = torch.randn(8, 1)
loss = nn.functional.mse_loss(model(data), target)

params = [p for p in model.parameters() if p.requires_grad]
grads = torch.autograd.grad(loss, params, create_graph=True)
vecs = [torch.randn_like(p) for p in params]
grad_dot_v = sum((g * vv).sum() for g, vv in zip(grads, vecs))
hv = torch.autograd.grad(grad_dot_v, params)
print("Hv shapes:", [tuple(h.shape) for h in hv])
print("v.Hv =", sum((h * vv).sum() for h, vv in zip(hv, vecs)).item())


# --- torch.autograd.functional ---------------------------------------------------------
def exp_reducer(x):
    return x.exp().sum(dim=1)


inputs = torch.rand(2, 2)
print(jacobian(exp_reducer, inputs))
print(jacobian(exp_reducer, inputs, create_graph=True))


def exp_adder(x, y):
    return 2 * x.exp() + 3 * y


inputs = (torch.rand(2), torch.rand(2))
print(jacobian(exp_adder, inputs))
print(jacobian(exp_adder, inputs, vectorize=True))


def pow_reducer(x):
    return x.pow(3).sum()


inputs = torch.rand(2, 2)
print(hessian(pow_reducer, inputs))


def pow_adder_reducer(x, y):
    return (2 * x.pow(2) + 3 * y.pow(2)).sum()


inputs = (torch.rand(2), torch.rand(2))
print(hessian(pow_adder_reducer, inputs))

inputs = torch.rand(4, 4)
v = torch.ones(4)
print(vjp(exp_reducer, inputs, v))


def exp_doubler(x):
    return 2 * x.exp()


inputs = torch.rand(3, 3)
v = torch.ones(3, 3)
print(jvp(exp_doubler, inputs, v))


def pow_sum(x):
    return x.pow(3).sum()


inputs = torch.rand(2, 2)
v = torch.ones(2, 2)
print(vhp(pow_sum, inputs, v))
print(hvp(pow_sum, inputs, v))
