# Follows the shape of: PyTorch tutorial "Jacobians, Hessians, hvp, vhp, and more: composing function transforms" — https://pytorch.org/tutorials/intermediate/jacobians_hessians.html (pytorch/tutorials: intermediate_source/jacobians_hessians.py)
# What it exercises: a Jacobian built row by row with torch.autograd.grad(predict(...), xp, vec) (one fresh forward and graph per row, on xp = x.clone().requires_grad_()), the same with torch.func.vjp + vmap, jacrev with argnums (input, then weight and bias), jacfwd, hessian and jacfwd(jacfwd(...)), batched Jacobians with vmap(in_dims=...) and the sum trick with movedim, and Hessian-vector products by jvp(grad(f)) and by vjp(grad(f)); torch.func.grad on its own.
# Adapted to run offline in a few seconds: D = 8 instead of 16; the torch.utils.benchmark timing comparisons (jacfwd vs jacrev at 32x2048 and 2048x32, vmap vs loop) are left out; Hessian sizes 16x6 instead of 512x32; batch 4x5->6 instead of 64x31->33; hvp vectors of 64 instead of 2048; printed summaries instead of notebook cell values.
import torch
import torch.nn.functional as F
from functools import partial

_ = torch.manual_seed(0)


# A linear layer followed by tanh: R^D -> R^D in x.
def predict(weight, bias, x):
    return F.linear(x, weight, bias).tanh()


D = 8
weight = torch.randn(D, D)
bias = torch.randn(D)
x = torch.randn(D)  # one feature vector


# Autograd gives vector-Jacobian products, so the full Jacobian takes one
# backward per output, each with a different unit vector.
def compute_jac(xp):
    jacobian_rows = [torch.autograd.grad(predict(weight, bias, xp), xp, vec)[0]
                     for vec in unit_vectors]
    return torch.stack(jacobian_rows)


xp = x.clone().requires_grad_()
unit_vectors = torch.eye(D)

jacobian = compute_jac(xp)

print(jacobian.shape)
print(jacobian[0])  # the first row

# The loop can be vectorised: vjp returns a function that vmap can batch.
from torch.func import vmap, vjp

_, vjp_fn = vjp(partial(predict, weight, bias), x)

ft_jacobian, = vmap(vjp_fn)(unit_vectors)

assert torch.allclose(ft_jacobian, jacobian)

# jacrev packages vjp + vmap; argnums picks the argument.
from torch.func import jacrev

ft_jacobian = jacrev(predict, argnums=2)(weight, bias, x)
assert torch.allclose(ft_jacobian, jacobian)

# Jacobians with respect to the parameters instead of the input.
ft_jac_weight, ft_jac_bias = jacrev(predict, argnums=(0, 1))(weight, bias, x)
print("jacobian wrt weight:", tuple(ft_jac_weight.shape), "wrt bias:", tuple(ft_jac_bias.shape))

# Forward mode gives the same matrix column by column.
from torch.func import jacrev, jacfwd

Din = 4
Dout = 12
weight = torch.randn(Dout, Din)
bias = torch.randn(Dout)
x = torch.randn(Din)
print(weight.shape)
jac_fwd = jacfwd(predict, argnums=2)(weight, bias, x)
jac_rev = jacrev(predict, argnums=2)(weight, bias, x)
print("jacfwd == jacrev:", torch.allclose(jac_fwd, jac_rev, atol=1e-6))

# Hessians: hessian(f) is jacfwd(jacrev(f)).
from torch.func import hessian

Din = 16
Dout = 6
weight = torch.randn(Dout, Din)
bias = torch.randn(Dout)
x = torch.randn(Din)

hess_api = hessian(predict, argnums=2)(weight, bias, x)
hess_fwdfwd = jacfwd(jacfwd(predict, argnums=2), argnums=2)(weight, bias, x)
hess_revrev = jacrev(jacrev(predict, argnums=2), argnums=2)(weight, bias, x)

print("hessian shape:", tuple(hess_api.shape),
      torch.allclose(hess_api, hess_fwdfwd, atol=1e-5),
      torch.allclose(hess_api, hess_revrev, atol=1e-5))

# Batch Jacobian: vmap over the batch dimension of x only.
batch_size = 4
Din = 5
Dout = 6

weight = torch.randn(Dout, Din)
print(f"weight shape = {weight.shape}")

bias = torch.randn(Dout)

x = torch.randn(batch_size, Din)

compute_batch_jacobian = vmap(jacrev(predict, argnums=2), in_dims=(None, None, 0))
batch_jacobian0 = compute_batch_jacobian(weight, bias, x)


# Samples are independent, so differentiating the sum over the batch works too.
def predict_with_output_summed(weight, bias, x):
    return predict(weight, bias, x).sum(0)


batch_jacobian1 = jacrev(predict_with_output_summed, argnums=2)(weight, bias, x).movedim(1, 0)
assert torch.allclose(batch_jacobian0, batch_jacobian1)
print("batch jacobian:", tuple(batch_jacobian0.shape))

compute_batch_hessian = vmap(hessian(predict, argnums=2), in_dims=(None, None, 0))

batch_hess = compute_batch_hessian(weight, bias, x)
print("batch hessian:", tuple(batch_hess.shape))

# Hessian-vector products without building the Hessian.
from torch.func import jvp, grad, vjp


def hvp(f, primals, tangents):
    return jvp(grad(f), primals, tangents)[1]


def f(x):
    return x.sin().sum()


x = torch.randn(64)
tangent = torch.randn(64)

result = hvp(f, (x,), (tangent,))


# reverse-over-reverse, for ops without forward-mode formulas
def hvp_revrev(f, primals, tangents):
    _, vjp_fn = vjp(grad(f), *primals)
    return vjp_fn(*tangents)


result_hvp_revrev = hvp_revrev(f, (x,), (tangent,))
assert torch.allclose(result, result_hvp_revrev[0])
# For sum(sin(x)) the Hessian is diag(-sin(x)).
print("hvp matches -sin(x) * v:", torch.allclose(result, -x.sin() * tangent, atol=1e-6))

# grad alone: d/dx of sum(sin x) is cos x.
print("grad(f)(x) == cos(x):", torch.allclose(grad(f)(x), x.cos()))
