# Follows the shape of: PyTorch tutorial "Forward-mode Automatic Differentiation (Beta)" — https://pytorch.org/tutorials/intermediate/forward_ad_usage.html (pytorch/tutorials: intermediate_source/forward_ad_usage.py)
# What it exercises: torch.autograd.forward_ad dual_level() contexts, make_dual (with a tangent of the same layout, then a transposed one that gets copied), unpack_dual(...).primal/.tangent, plain tensors treated as zero tangents, tangents gone after the context exits; swapping an nn.Linear's parameters for dual tensors with delattr/setattr; torch.func.functional_call with a dict of dual parameters; a custom autograd.Function with a jvp() staticmethod (ctx.result saved in forward, del'd in jvp) checked by gradcheck(check_forward_ad=True, check_backward_ad=False, ...); the functional torch.func.jvp with functools.partial, and jvp over a module's parameters via functional_call.
# Adapted to run offline in a few seconds: 4x4 tensors instead of 10x10 and a 3->3 Linear on 6 samples instead of 5->5 on 16; the end of the tutorial uses the old functorch package (ft.jvp, make_functional_with_buffers), written here with torch.func.jvp and torch.func.functional_call; results are printed as shapes and allclose checks; fixed seed.
import functools

import torch
import torch.autograd.forward_ad as fwAD
import torch.nn as nn

torch.manual_seed(0)

primal = torch.randn(4, 4)
tangent = torch.randn(4, 4)


def fn(x, y):
    return x ** 2 + y ** 3


# Dual tensors only live inside a dual_level context.
with fwAD.dual_level():
    # A dual tensor pairs a primal with a tangent of the same shape; it is a
    # view of the primal.
    dual_input = fwAD.make_dual(primal, tangent)
    assert fwAD.unpack_dual(dual_input).tangent is tangent

    # A tangent with another layout is copied, not used as-is.
    dual_input_alt = fwAD.make_dual(primal, tangent.T)
    assert fwAD.unpack_dual(dual_input_alt).tangent is not tangent

    # Tensors without a tangent count as having a zero tangent.
    plain_tensor = torch.randn(4, 4)
    dual_output = fn(dual_input, plain_tensor)

    # unpack_dual gives a namedtuple (primal, tangent).
    jvp = fwAD.unpack_dual(dual_output).tangent

print("jvp == 2 * primal * tangent:", torch.allclose(jvp, 2 * primal * tangent))
assert fwAD.unpack_dual(dual_output).tangent is None

# --- with modules: replace the parameters by dual tensors ---------------------------
model = nn.Linear(3, 3)
input = torch.randn(6, 3)

params = {name: p for name, p in model.named_parameters()}
tangents = {name: torch.rand_like(p) for name, p in params.items()}

with fwAD.dual_level():
    for name, p in params.items():
        delattr(model, name)
        setattr(model, name, fwAD.make_dual(p, tangents[name]))

    out = model(input)
    jvp = fwAD.unpack_dual(out).tangent

print("module jvp shape:", tuple(jvp.shape))

# --- the functional Module API ----------------------------------------------------------
from torch.func import functional_call

# a fresh module: functional_call needs registered parameters
model = nn.Linear(3, 3)

dual_params = {}
with fwAD.dual_level():
    for name, p in params.items():
        # the same tangents as above
        dual_params[name] = fwAD.make_dual(p, tangents[name])
    out = functional_call(model, dual_params, input)
    jvp2 = fwAD.unpack_dual(out).tangent

assert torch.allclose(jvp, jvp2)
print("functional_call jvp matches:", torch.allclose(jvp, jvp2))


# --- a custom Function with a forward-mode formula -------------------------------------------
class Fn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, foo):
        result = torch.exp(foo)
        # kept for the jvp below
        ctx.result = result
        return result

    @staticmethod
    def jvp(ctx, gI):
        gO = gI * ctx.result
        # not needed by any backward, so free it now
        del ctx.result
        return gO


fn = Fn.apply

primal = torch.randn(4, 4, dtype=torch.double, requires_grad=True)
tangent = torch.randn(4, 4)

with fwAD.dual_level():
    dual_input = fwAD.make_dual(primal, tangent)
    dual_output = fn(dual_input)
    jvp = fwAD.unpack_dual(dual_output).tangent

print("custom jvp == exp(x) * t:", torch.allclose(jvp, primal.detach().exp() * tangent))

# Only the forward-mode formula exists, so skip the backward checks.
print(torch.autograd.gradcheck(Fn.apply, (primal,), check_forward_ad=True,
                               check_backward_ad=False, check_undefined_grad=False,
                               check_batched_grad=False))

# --- the functional API ---------------------------------------------------------------
import torch.func as ft

primal0 = torch.randn(4, 4)
tangent0 = torch.randn(4, 4)
primal1 = torch.randn(4, 4)
tangent1 = torch.randn(4, 4)


def fn(x, y):
    return x ** 2 + y ** 3


# jvp returns fn(*primals) and the directional derivative.
primal_out, tangent_out = ft.jvp(fn, (primal0, primal1), (tangent0, tangent1))
print("jvp out:", tuple(primal_out.shape), tuple(tangent_out.shape))

# Every primal needs a tangent: bind the others with partial.
primal = torch.randn(4, 4)
tangent = torch.randn(4, 4)
y = torch.randn(4, 4)

new_fn = functools.partial(fn, y=y)
primal_out, tangent_out = ft.jvp(new_fn, (primal,), (tangent,))
print("partial jvp == 2 * x * t:", torch.allclose(tangent_out, 2 * primal * tangent))

# --- the functional API with modules ---------------------------------------------------------
model = nn.Linear(3, 3)
input = torch.randn(6, 3)
params = dict(model.named_parameters())
tangents = {name: torch.rand_like(p) for name, p in params.items()}


def func_params_only(params):
    return functional_call(model, params, (input,))


model_output, jvp_out = ft.jvp(func_params_only, (params,), (tangents,))
print("module jvp over parameters:", tuple(jvp_out.shape))
