# Follows the shape of: PyTorch docs "Extending PyTorch" — "Extending torch.autograd" (LinearFunction, MulConstant, gradcheck) and "Extending torch.nn" (a Linear module on top of the Function) — https://pytorch.org/docs/stable/notes/extending.html (pytorch/pytorch: docs/source/notes/extending.rst)
# What it exercises: a custom torch.autograd.Function with separate forward() and setup_context() (ctx.save_for_backward of several tensors, one of them possibly None), backward() that checks ctx.needs_input_grad and returns None for unneeded inputs, a second Function with a non-tensor argument (returns None for it), ctx.mark_non_differentiable on an extra output, torch.autograd.gradcheck on double-precision inputs (eps=1e-6, atol=1e-4), and an nn.Module wrapper with nn.Parameter weights used in a small SGD loop.
# Adapted to run offline in a few seconds: gradcheck inputs of 6x5 and 4x5 instead of 20x20 and 30x20; the module is trained for 5 steps on random data (the docs only define it); the sort-style Function with mark_non_differentiable is written for this file after the docs' description of that method; fixed seed.
import torch
from torch import nn
from torch.autograd import Function, gradcheck


class LinearFunction(Function):

    # forward only computes; the context is filled in setup_context
    @staticmethod
    def forward(input, weight, bias=None):
        output = input.mm(weight.t())
        if bias is not None:
            output += bias.unsqueeze(0).expand_as(output)
        return output

    @staticmethod
    # inputs is the tuple of arguments given to forward()
    def setup_context(ctx, inputs, output):
        input, weight, bias = inputs
        ctx.save_for_backward(input, weight, bias)

    # one gradient per forward() input, None where not needed
    @staticmethod
    def backward(ctx, grad_output):
        input, weight, bias = ctx.saved_tensors
        grad_input = grad_weight = grad_bias = None

        # Skipping gradients nobody asked for saves work; returning
        # them anyway would also be correct.
        if ctx.needs_input_grad[0]:
            grad_input = grad_output.mm(weight)
        if ctx.needs_input_grad[1]:
            grad_weight = grad_output.t().mm(input)
        if bias is not None and ctx.needs_input_grad[2]:
            grad_bias = grad_output.sum(0)

        return grad_input, grad_weight, grad_bias


class MulConstant(Function):
    @staticmethod
    def forward(tensor, constant):
        return tensor * constant

    @staticmethod
    def setup_context(ctx, inputs, output):
        # a plain Python number can live on ctx directly
        tensor, constant = inputs
        ctx.constant = constant

    @staticmethod
    def backward(ctx, grad_output):
        # the constant is not a tensor: its gradient is None
        return grad_output * ctx.constant, None


class SortWithIndices(Function):
    """Sorted values are differentiable; the permutation is not."""

    @staticmethod
    def forward(ctx, x):
        values, idx = x.sort()
        ctx.mark_non_differentiable(idx)
        ctx.save_for_backward(idx)
        return values, idx

    @staticmethod
    def backward(ctx, grad_values, grad_idx):
        idx, = ctx.saved_tensors
        grad_input = torch.zeros_like(grad_values)
        grad_input.scatter_(-1, idx, grad_values)
        return grad_input


linear = LinearFunction.apply

torch.manual_seed(0)

# gradcheck compares backward() with finite differences; it needs doubles.
input = (torch.randn(6, 5, dtype=torch.double, requires_grad=True),
         torch.randn(4, 5, dtype=torch.double, requires_grad=True))
test = gradcheck(linear, input, eps=1e-6, atol=1e-4)
print(test)

x = torch.randn(3, 4, dtype=torch.double, requires_grad=True)
print(gradcheck(lambda t: MulConstant.apply(t, 2.5), (x,)))

values, idx = SortWithIndices.apply(x)
print('idx requires grad:', idx.requires_grad, '/ values requires grad:', values.requires_grad)
values[:, -1].sum().backward()
print(x.grad)
print(gradcheck(lambda t: SortWithIndices.apply(t)[0], (x,)))


class Linear(nn.Module):
    def __init__(self, input_features, output_features, bias=True):
        super().__init__()
        self.input_features = input_features
        self.output_features = output_features

        # Parameters are registered just by being assigned as attributes.
        self.weight = nn.Parameter(torch.empty(output_features, input_features))
        if bias:
            self.bias = nn.Parameter(torch.empty(output_features))
        else:
            # optional parameters are registered as None
            self.register_parameter('bias', None)

        # an arbitrary initialization
        self.weight.data.uniform_(-0.1, 0.1)
        if self.bias is not None:
            self.bias.data.uniform_(-0.1, 0.1)

    def forward(self, input):
        return LinearFunction.apply(input, self.weight, self.bias)

    def extra_repr(self):
        return 'input_features={}, output_features={}, bias={}'.format(
            self.input_features, self.output_features, self.bias is not None
        )


layer = Linear(5, 3)
print(layer)
data = torch.randn(8, 5)
target = torch.randn(8, 3)
optimizer = torch.optim.SGD(layer.parameters(), lr=0.1)
for step in range(5):
    optimizer.zero_grad()
    out = layer(data)
    loss = ((out - target) ** 2).mean()
    loss.backward()
    optimizer.step()
    print(step, round(loss.item(), 5))
