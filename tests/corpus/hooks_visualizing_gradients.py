# Follows the shape of: PyTorch tutorial "Visualizing Gradients" — https://pytorch.org/tutorials/intermediate/visualizing_gradients_tutorial.html (pytorch/tutorials: intermediate_source/visualizing_gradients_tutorial.py); the retain_grad() and module full-backward-hook part follows the "Backward Hooks execution" section of the Autograd mechanics note — https://pytorch.org/docs/stable/notes/autograd.html (docs/source/notes/autograd.rst)
# What it exercises: retain_grad() on intermediate (non-leaf) tensors and reading their .grad, a Net of repeated Linear -> BatchNorm1d/Identity -> Sigmoid blocks, module.register_forward_hook whose hook calls output.register_hook(...) on the module's output tensor (closures built by hook-factory functions append (name, grad) to a list), training two models side by side with SGD+momentum and F.cross_entropy, then mean |grad| per layer; a module.register_full_backward_hook printing grad_output norms; a tensor hook that rescales a gradient; handle.remove().
# Adapted to run offline in a few seconds: hidden size 32 instead of 128 on random 10x28x28 inputs (the tutorial also uses dummy data), 3 epochs instead of 10, the average gradients printed instead of plotted with matplotlib; fixed seed.
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

torch.manual_seed(0)

# --- retain_grad on intermediate tensors --------------------------------------
a = torch.tensor([2.0, -1.0, 0.5], requires_grad=True)
b = a * 3
b.retain_grad()
c = b.sigmoid()
c.retain_grad()
d = (c * c).sum()
d.backward()
print("a.grad:", a.grad)
print("b.grad:", b.grad)
print("c.grad:", c.grad)
print("b is a leaf:", b.is_leaf, "| a is a leaf:", a.is_leaf)


# --- the tutorial's network ---------------------------------------------------
def fc_layer(in_size, out_size, norm_layer):
    """Linear, then normalisation, then a sigmoid."""
    return nn.Sequential(nn.Linear(in_size, out_size), norm_layer(out_size), nn.Sigmoid())


class Net(nn.Module):
    """num_layers blocks of linear->norm->sigmoid, then a linear classifier."""

    def __init__(self, in_size=28 * 28, hidden_size=32,
                 out_size=10, num_layers=3, batchnorm=False):
        super().__init__()
        if batchnorm is False:
            norm_layer = nn.Identity
        else:
            norm_layer = nn.BatchNorm1d

        layers = [fc_layer(in_size, hidden_size, norm_layer)]
        for i in range(num_layers - 1):
            layers.append(fc_layer(hidden_size, hidden_size, norm_layer))
        layers.append(nn.Linear(hidden_size, out_size))

        self.layers = nn.Sequential(*layers)

    def forward(self, x):
        x = torch.flatten(x, 1)
        return self.layers(x)


# dummy data
x = torch.randn(10, 28, 28)
y = torch.randint(10, (10,))

model_bn = Net(batchnorm=True, num_layers=3)
model_nobn = Net(batchnorm=False, num_layers=3)

model_bn.train()
model_nobn.train()

optimizer_bn = optim.SGD(model_bn.parameters(), lr=0.01, momentum=0.9)
optimizer_nobn = optim.SGD(model_nobn.parameters(), lr=0.01, momentum=0.9)

print(model_bn.layers[0])
print(model_nobn.layers[0])


# The hook factories close over the layer name and the list to append to.
def hook_forward(module_name, grads, hook_backward):
    def hook(module, args, output):
        """After the module runs, ask for the gradient of its output."""
        output.register_hook(hook_backward(module_name, grads))
    return hook


def hook_backward(module_name, grads):
    def hook(grad):
        """Record the gradient that reached this output."""
        grads.append((module_name, grad))
    return hook


def get_all_layers(model, hook_forward, hook_backward):
    """Put a forward hook on every leaf module; return {module: name} and the grads list."""
    layers = dict()
    grads = []
    for name, layer in model.named_modules():
        # containers have children; only leaf modules get hooks
        if any(layer.children()) is False:
            layers[layer] = name
            layer.register_forward_hook(hook_forward(name, grads, hook_backward))
    return layers, grads


layers_bn, grads_bn = get_all_layers(model_bn, hook_forward, hook_backward)
layers_nobn, grads_nobn = get_all_layers(model_nobn, hook_forward, hook_backward)

epochs = 3

for epoch in range(epochs):

    # the hooks append on every backward, so start each epoch empty
    grads_bn.clear()
    grads_nobn.clear()

    optimizer_bn.zero_grad()
    optimizer_nobn.zero_grad()

    y_pred_bn = model_bn(x)
    y_pred_nobn = model_nobn(x)

    loss_bn = F.cross_entropy(y_pred_bn, y)
    loss_nobn = F.cross_entropy(y_pred_nobn, y)

    loss_bn.backward()
    loss_nobn.backward()

    optimizer_bn.step()
    optimizer_nobn.step()
    print(f"epoch {epoch}: loss with BN {loss_bn.item():.4f}, without {loss_nobn.item():.4f}")


def get_grads(grads):
    layer_idx = []
    avg_grads = []
    for idx, (name, grad) in enumerate(grads):
        if grad is not None:
            avg_grad = grad.abs().mean()
            avg_grads.append(avg_grad)
            # appended during backward, so the order is last layer first
            layer_idx.append(len(grads) - 1 - idx)
    return layer_idx, avg_grads


layer_idx_bn, avg_grads_bn = get_grads(grads_bn)
layer_idx_nobn, avg_grads_nobn = get_grads(grads_nobn)

for depth, g_bn, g_nobn in zip(layer_idx_bn, avg_grads_bn, avg_grads_nobn):
    print(f"depth {depth:2d}: with BN {g_bn.item():.2e}  without BN {g_nobn.item():.2e}")


# --- module backward hooks and a gradient-changing tensor hook -------------------
def report_grad_output(module, grad_input, grad_output):
    print(f"{module.__class__.__name__} grad_output norm {grad_output[0].norm().item():.4f}")


handle = model_nobn.layers[-1].register_full_backward_hook(report_grad_output)

w = torch.randn(4, requires_grad=True)
w.register_hook(lambda grad: grad * 0.5)  # halve whatever reaches w
out = model_nobn(x)
loss = F.cross_entropy(out, y) + (w ** 2).sum()
loss.backward()
print("w.grad is half of 2*w:", torch.allclose(w.grad, w.detach()))
handle.remove()
